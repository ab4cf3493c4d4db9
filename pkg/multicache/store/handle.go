package store

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Handle is what a store is built with (a StoreFactory's argument): the configuration the
// flags set and the queries through which a store reads the core stores while an event is
// applied. Like kube-scheduler's framework.Handle it gives a plug-in what it may use and
// nothing more: no lock (every store method already runs under the handler's lock) and no
// way to dispatch events (only the handler does, after validating them).
type Handle interface {
	// ComponentName names this component (in Movement status and logs).
	ComponentName() string
	// SchedulerType is the scheduler this cache serves (its schedulerName).
	SchedulerType() string
	// SubClusterKey is the node label that splits the cluster into sub-clusters ("" for
	// none); SubCluster is the value this replica serves ("" for the whole cluster).
	SubClusterKey() string
	SubCluster() string
	// IsStoreEnabled reports whether a store is built (nodes and pods always are).
	IsStoreEnabled(name Name) bool
	// PodAssumedTTL is how long an assumed pod lives after FinishBinding without the API
	// confirming it.
	PodAssumedTTL() time.Duration
	// Period is how often the handler's housekeeping runs.
	Period() time.Duration
	// StopCh is closed when the operator stops (its manager's context ends).
	StopCh() <-chan struct{}
	// PodReader reads pods from the manager's informer cache (nil when not configured).
	PodReader() client.Reader
	// Clock is the time source of TTLs and deadlines (a fake one in tests).
	Clock() clock.WithTicker
	// Generations hands out the generation numbers of incremental snapshots: give it to
	// NewVersioned.
	Generations() *Generations
	// Accounting is how pods are charged to nodes here (the feature gates of
	// kube-scheduler's charge the operator's flags mirror): a store that charges pods calls
	// Accounting().PodRequests, as the node store does.
	Accounting() Accounting
	// GetNodeInfo returns the node store's live NodeInfo of a node, during an event only
	// (the caller runs under the handler's lock); it must not be modified or kept.
	GetNodeInfo(name string) (*NodeInfo, bool)
	// GetPodState returns the state of a pod in the assumed-pod state machine. During a pod
	// event it is still the state before the event: the pod store is updated last.
	GetPodState(key types.NamespacedName) (PodStatus, bool)
}
