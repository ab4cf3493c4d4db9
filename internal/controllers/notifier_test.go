package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestNotifier_AStartingWriterTakesWhatTheStatusesLagBeforeItsInitialList: chaos D8. A
// standby that takes the lead placed reservations whose statuses record nothing (the old
// leader was killed before writing); its status writer must write those first, not after
// every object of its initial list, or the replicas show different times for seconds.
func TestNotifier_AStartingWriterTakesWhatTheStatusesLagBeforeItsInitialList(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	// The writer's initial list, as controller-runtime's For() handler queues it.
	for _, name := range []string{"a", "b", "c"} {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req(name))
	}
	lagging := types.NamespacedName{Namespace: "ns", Name: "placed-unrecorded"}
	n := NewNotifier()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := n.source(stores.KindReservation, func() []types.NamespacedName { return []types.NamespacedName{lagging} })
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for q.Len() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got, _ := q.Get(); got.NamespacedName != lagging {
		t.Errorf("first taken %v, want the lagging %v ahead of the initial list", got, lagging)
	}
}

func req(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
}

// TestStatusLags_WhatTheCacheDecidedAndNoStatusRecords: the leader's first writes are the
// reservations whose status misses a phase, owner or time the cache holds.
func TestStatusLags_WhatTheCacheDecidedAndNoStatusRecords(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rsv := &v1alpha1.Reservation{}
	view := store.Reservation{Reservation: rsv, Phase: v1alpha1.ReservationReserved, Node: "n1", ReservedAt: at, ExpiresAt: at.Add(time.Minute)}
	if !statusLags(view) {
		t.Error("a Reserved view over an empty status: want lagging")
	}
	rsv.Status = v1alpha1.ReservationStatus{Phase: v1alpha1.ReservationReserved,
		ReservedAt: ptr.To(metav1.NewTime(at)), ExpiresAt: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
	if statusLags(view) {
		t.Error("the status records what the view holds: want not lagging")
	}
	owner := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}}
	matched := view
	matched.Phase, matched.Owner = v1alpha1.ReservationMatched, &v1alpha1.PodReference{Namespace: owner.Namespace, Name: owner.Name, UID: owner.UID}
	if !statusLags(matched) {
		t.Error("Matched in the cache, Reserved in the status: want lagging")
	}
	if statusLags(store.Reservation{Provisional: true, Reservation: &v1alpha1.Reservation{}, Phase: v1alpha1.ReservationReserved}) {
		t.Error("a hold is not an API object yet: want not lagging")
	}
}
