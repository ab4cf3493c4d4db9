package controllers

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/scheme"
)

func TestFencedClient_RefusesEveryWriteWhileTheFenceIsUp(t *testing.T) {
	rsv := &v1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"}}
	base := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(rsv).WithStatusSubresource(rsv).Build()
	lost := errors.New("lease lost")
	var fenceErr error
	c := fenced(base, func() error { return fenceErr })
	ctx := context.Background()

	fenceErr = lost
	got := &v1alpha1.Reservation{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rsv), got); err != nil {
		t.Fatalf("a read was fenced: %v", err)
	}
	patch := client.MergeFrom(got.DeepCopy())
	got.Status.Phase = v1alpha1.ReservationExpired
	for name, write := range map[string]func() error{
		"status patch":  func() error { return c.Status().Patch(ctx, got, patch) },
		"status update": func() error { return c.Status().Update(ctx, got) },
		"patch":         func() error { return c.Patch(ctx, got, patch) },
		"update":        func() error { return c.Update(ctx, got) },
		"delete":        func() error { return c.Delete(ctx, got) },
		"create": func() error {
			return c.Create(ctx, &v1alpha1.Reservation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}})
		},
		"subresource": func() error { return c.SubResource("status").Patch(ctx, got, patch) },
	} {
		if err := write(); !errors.Is(err, lost) {
			t.Errorf("%s with the fence up: %v", name, err)
		}
	}
	fenceErr = nil
	if err := c.Status().Patch(ctx, got, patch); err != nil {
		t.Errorf("a status patch with the fence down: %v", err)
	}
	if fenced(base, nil) != base {
		t.Error("no fence must mean the client itself")
	}
}
