package controllers

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// What each status writer reads of the cache (*handler.Handler answers all of them).

type reservationReader interface {
	Reservation(key types.NamespacedName) (store.Reservation, bool)
}

type movementReader interface {
	Movement(name string) (store.Movement, bool)
}

type podGroupReader interface {
	PodGroup(key types.NamespacedName) (store.PodGroup, bool)
	PodState(key types.NamespacedName) (store.PodStatus, bool)
}
