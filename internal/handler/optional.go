package handler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The handler knows the core stores (nodes, pods) by type; it reaches the optional ones
// through these interfaces, each the few methods one caller needs, looked up by name with
// lookup. A store that is disabled, or replaced by one without the methods, simply answers
// nothing. registry.go checks that the built-in stores implement them.

// podGroupQuerier is the pod group store as the Reader queries it.
type podGroupQuerier interface {
	store.Store
	Get(key types.NamespacedName) (store.PodGroup, bool)
}

// pdbQuerier is the disruption budget store as the Reader queries it.
type pdbQuerier interface {
	store.Store
	ForPod(pod *corev1.Pod) []store.PDB
	ForOwner(owner store.OwnerKey) []store.PDB
}

// movementQuerier is the movement store as the Reader queries it.
type movementQuerier interface {
	store.Store
	Get(name string) (store.Movement, bool)
	SuggestionsFor(owner store.OwnerKey) map[string]int64
}

// reservationQuerier is the reservation store as the Reader and the gauges query it.
type reservationQuerier interface {
	store.Store
	Get(key types.NamespacedName) (store.Reservation, bool)
	OnNode(node string) []store.Reservation
	MatchableFor(pod *corev1.Pod) []store.Reservation
	CountByPhase() map[v1alpha1.ReservationPhase]int
	Each(fn func(store.Reservation) bool)
}

// placeKeeper is a store that lets a deleted pod keep its place (reserve-on-delete).
type placeKeeper interface {
	store.Store
	// PodGone is told of a bound pod the API deleted, under the lock of its delete (or of
	// the update that made a deleted pod terminal, the kubelet's last word before its
	// removal); next is the pod of the same name that replaced it, if any.
	PodGone(pod, next *corev1.Pod) (kept bool, err error)
	// Holds returns the keys of the holds no Reservation took over yet.
	Holds() []types.NamespacedName
	// KeepsPlaceFor reports whether a terminating pod's place is to be kept for pod.
	KeepsPlaceFor(leaving, pod *corev1.Pod) bool
}

// reaper is a store whose entries expire on the clock (the reservations' TTL).
type reaper interface {
	store.Store
	ExpireDue(now time.Time) []reservationstore.Transition
}

// deviceQuerier is the devices store as the Reader reads it.
type deviceQuerier interface {
	store.Store
	Node(name string) (store.NodeDevices, bool)
}

var _ deviceQuerier = (*devicestore.Store)(nil)
