// Package plugin is the multicache kube-scheduler plugin: it runs multicache's cache in the
// scheduler's process and acts on what the cache knows.
//
//   - PreFilter/Filter: a node's room leaves out what Reserved reservations and deleted
//     pods' holds (multicache.dev/reserve-on-delete) keep there, unless the pod may consume
//     them (Reader.RoomHeldFrom). kube-scheduler's NodeResourcesFit counts the pods; this
//     is the extra subtraction.
//   - PreScore/Score: a pod with a matching reservation or hold prefers its node.
//   - Reserve/Unreserve/PostBind: the pod is assumed into the cache (Assumer), forgotten
//     when its scheduling fails, and its assumption's expiry clock starts once bound.
//   - Permit: a member of a pod group of any source (multicache's, Kubernetes',
//     scheduler-plugins') waits until minMember members are placed, up to the group's
//     scheduleTimeoutSeconds, else Args.PermitWaitingTimeSeconds; then all bind, or all
//     are rejected.
//
// The cache is read only through pkg/multicache.
package plugin

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

// Name is the plugin's name in a scheduler profile.
const Name = "Multicache"

// Plugin is the multicache plugin of one scheduler profile.
type Plugin struct {
	handle  fwk.Handle
	reader  multicache.Reader
	assumer multicache.Assumer
	args    Args
	run     *run
	log     logr.Logger
	// snap is the cache as of the last PreFilter, read by that cycle's Filters.
	snap    *multicache.Snapshot
	lagMemo lagMemo
	retry   retrier
	held    heldWaiters
}

var (
	_ fwk.PreFilterPlugin     = &Plugin{}
	_ fwk.PreFilterExtensions = &Plugin{}
	_ fwk.FilterPlugin        = &Plugin{}
	_ fwk.PreScorePlugin      = &Plugin{}
	_ fwk.ScorePlugin         = &Plugin{}
	_ fwk.ReservePlugin       = &Plugin{}
	_ fwk.PermitPlugin        = &Plugin{}
	_ fwk.PostBindPlugin      = &Plugin{}
)

// NewFactory returns the plugin's factory, for app.WithPlugin(Name, NewFactory(leading)).
// Every profile's plugin shares one cache, started by the first and waited for until it
// caught up. leading is closed when the scheduler replica leads (the command package
// watches kube-scheduler's lock): multicache's leader-only work starts then, unless
// Args.LeaderWork is false. A nil leading keeps that work off: use it when registering
// the plugin in a command of your own that does not tell (and run multicache's operator
// beside the scheduler for status and holds' Reservations).
func NewFactory(leading <-chan struct{}) frameworkruntime.PluginFactory {
	e := &embedded{leading: leading}
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		args, err := DecodeArgs(obj)
		if err != nil {
			return nil, err
		}
		log := klog.FromContext(ctx).WithName(Name).WithValues("profile", h.ProfileName())
		op, r, err := e.start(ctx, h.KubeConfig(), args, log)
		if err != nil {
			return nil, err
		}
		reader := op.Reader()
		p := &Plugin{handle: h, reader: reader, assumer: op.Assumer(), args: args, run: r, log: log,
			snap: reader.NewSnapshot(multicache.SnapshotOptions{})}
		go p.runRetries(ctx)
		return p, nil
	}
}

// Name implements fwk.Plugin.
func (p *Plugin) Name() string { return Name }

// cacheDown is the status of every extension point once the cache stopped: scheduling on
// a cache that no longer follows the cluster would hand out kept places.
func (p *Plugin) cacheDown() *fwk.Status {
	if err := p.run.failure(); err != nil {
		return fwk.AsStatus(fmt.Errorf("multicache is not running: %w", err))
	}
	return nil
}
