package controllers

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// What each status writer reads of the cache (*handler.Handler answers all of them).

type reservationReader interface {
	Reservation(key types.NamespacedName) (reservationstore.View, bool)
}

type movementReader interface {
	Movement(name string) (movementstore.MovementView, bool)
}

type podGroupReader interface {
	PodGroup(key types.NamespacedName) (podgroupstore.GroupStatus, bool)
	PodState(key types.NamespacedName) (store.PodStatus, bool)
}
