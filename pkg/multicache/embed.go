package multicache

import (
	"errors"

	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/operator"
)

// NewEmbedded builds the operator to run inside another component's process, typically a
// scheduler that reads and assumes through it (Operator.Reader, Operator.Assumer), against
// the component's own cfg. multicache's own leader election must be off (--leader-elect,
// on by default, is refused): the component's election is the one. leading is closed when
// the component starts leading; multicache's leader-only work (the status writers, the
// reservation reaper that decides expiries and turns deleted pods' holds into
// Reservations, siblings that need leader election) starts then, and only in the process
// that leads. A nil leading keeps that work off for good: the cache is fed, expires
// assumed pods and holds, and answers, on every replica, while another multicache (the
// operator's Deployment) writes. Everything else is as New builds it: the servers the
// options leave on listen (turn them off with --metrics-bind-address=0,
// --health-probe-bind-address=0, --debug-bind-address=0 when the component serves its
// own). Once the cache caught up, the process's GC percent drops to --steady-gogc (default
// 50; 0, or GOGC set, keeps it), as in multicache's own binary: the cache's objects live as
// long as the process, and a collector at 100 lets the heap grow to twice them.
func NewEmbedded(cfg *rest.Config, opts Options, leading <-chan struct{}) (*Operator, error) {
	if opts.o.LeaderElect {
		return nil, errors.New("an embedded multicache follows its component's leader election: pass --leader-elect=false")
	}
	o := opts.o
	o.Leading = leading
	if o.Leading == nil {
		o.Leading = make(chan struct{}) // never closed: the leader-only work stays off
	}
	op, err := operator.New(cfg, o)
	if err != nil {
		return nil, err
	}
	return &Operator{op: op, steadyGOGC: opts.steadyGOGC}, nil
}
