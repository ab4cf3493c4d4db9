package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func TestCatchUp_DoneOnlyWhenEveryInitialKeyWasReconciled(t *testing.T) {
	c := NewCatchUp(nil, logr.Discard(), nil)
	failing := map[string]bool{"ns/b": true}
	pods := c.Track("pod-feed", &corev1.Pod{}, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if failing[requestKey(req)] {
			return reconcile.Result{}, errors.New("transient")
		}
		return reconcile.Result{}, nil
	}))
	nodes := c.Track("node-feed", &corev1.Node{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}))
	ctx := context.Background()

	// A key reconciled before its informer's initial list is known still counts.
	_, _ = pods.Reconcile(ctx, request("ns", "a"))
	c.arm("pod-feed", []string{"ns/a", "ns/b", "ns/c"})
	if c.CaughtUp() {
		t.Fatal("caught up before the node feed's informer synced")
	}
	c.arm("node-feed", nil)
	_, _ = pods.Reconcile(ctx, request("ns", "c"))
	_, _ = pods.Reconcile(ctx, request("ns", "b")) // fails: not applied
	_, _ = pods.Reconcile(ctx, request("ns", "new"))
	if c.CaughtUp() {
		t.Fatalf("caught up while ns/b failed; status %q", c.Status())
	}
	if got := c.Status(); got != "pod-feed: 1 of 3 initial objects not applied" {
		t.Errorf("status %q", got)
	}
	failing["ns/b"] = false
	_, _ = pods.Reconcile(ctx, request("ns", "b"))
	select {
	case <-c.Done():
	default:
		t.Fatalf("not caught up after every initial key was applied; status %q", c.Status())
	}
	if _, objects := c.Result(); objects != 3 {
		t.Errorf("caught up with %d objects, want 3", objects)
	}
	_, _ = nodes.Reconcile(ctx, request("", "late")) // after catching up: nothing to track
}

func TestCatchUp_GateHoldsStatusWritersUntilCaughtUp(t *testing.T) {
	c := NewCatchUp(nil, logr.Discard(), nil)
	feed := c.Track("pod-feed", &corev1.Pod{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}))
	ran := make(chan struct{}, 1)
	writer := c.Gate(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		ran <- struct{}{}
		return reconcile.Result{}, nil
	}))
	done := make(chan error, 1)
	go func() { _, err := writer.Reconcile(context.Background(), request("ns", "x")); done <- err }()
	c.arm("pod-feed", []string{"ns/x"})
	select {
	case <-ran:
		t.Fatal("the status writer ran before the cache caught up")
	case <-time.After(50 * time.Millisecond):
	}
	_, _ = feed.Reconcile(context.Background(), request("ns", "x"))
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the status writer did not run once caught up")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A writer stopped before the cache caught up returns quietly, without running.
	stuck := NewCatchUp(nil, logr.Discard(), nil)
	stuck.Track("pod-feed", &corev1.Pod{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := stuck.Gate(nil).Reconcile(ctx, request("ns", "x")); err != nil {
		t.Errorf("gate on a stopped context returned %v", err)
	}
}
