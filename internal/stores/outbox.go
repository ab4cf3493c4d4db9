package stores

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Outbox is what a store asks the handler to do during one call, instead of calling it:
// synthetic pod events for the other stores (the ReservationStore's placeholders) and the
// objects whose derived status changed (for the status writers). A store embeds one; the
// handler takes it (TakeOutbox) once each call into the store returns and applies it, so
// events flow one way: the handler calls stores, stores never call the handler.
type Outbox struct {
	podOps  []PodOp
	changed []ChangedObject
}

// PodOp is a synthetic pod event a store asks for: an add (Add) or a delete of Pod for the
// other stores.
type PodOp struct {
	Pod *corev1.Pod
	Add bool
}

// ChangedObject names an object whose status the cache derives (a pod group's counters, a
// reservation's phase, a movement's actual pods, a hold) and which changed.
type ChangedObject struct {
	Kind Kind
	Key  types.NamespacedName
}

// AskPodOp asks for pod to be added to (add) or deleted from the other stores.
func (o *Outbox) AskPodOp(pod *corev1.Pod, add bool) {
	o.podOps = append(o.podOps, PodOp{Pod: pod, Add: add})
}

// ObjectChanged records that what the cache derives for an object changed.
func (o *Outbox) ObjectChanged(kind Kind, key types.NamespacedName) {
	o.changed = append(o.changed, ChangedObject{Kind: kind, Key: key})
}

// TakeOutbox returns what was asked for since the last call, in order, and forgets it.
// changed is valid until the next call into the store: its array is reused, since a pod
// group's counters change with nearly every pod event of its members.
func (o *Outbox) TakeOutbox() (podOps []PodOp, changed []ChangedObject) {
	podOps, changed = o.podOps, o.changed
	o.podOps, o.changed = nil, o.changed[:0]
	return podOps, changed
}

// Untaken is an error when something was asked for and never taken: a call the handler
// made into the store without applying its outbox (for CheckInvariants).
func (o *Outbox) Untaken() error {
	if len(o.podOps) == 0 && len(o.changed) == 0 {
		return nil
	}
	return fmt.Errorf("%d synthetic pod events and %d changed objects asked for and never taken (TakeOutbox)", len(o.podOps), len(o.changed))
}

// OutboxSource is a store with an Outbox.
type OutboxSource interface {
	TakeOutbox() ([]PodOp, []ChangedObject)
}
