package operator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestCompare_APodTheCacheLostIsReportedWithItsAPIVersion makes the cache forget a pod the
// API still holds (as a lost delete event would) and checks that /debug/cache/compare,
// listing metadata only and reading each difference again, reports exactly that pod, with
// the API's resource version, and nothing else.
func TestCompare_APodTheCacheLostIsReportedWithItsAPIVersion(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	node := "compare-node"
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	lost := withoutUID(ts.MakePod(ns, "lost", ts.OnNode(node), ts.Requests("1", "1Gi")))
	kept := withoutUID(ts.MakePod(ns, "kept", ts.OnNode(node), ts.Requests("1", "1Gi")))
	create(t, lost, kept)
	consistent(t, op)

	key := types.NamespacedName{Namespace: ns, Name: "lost"}
	if err := op.Cache.Sync(key, (*corev1.Pod)(nil), true, handler.Current); err != nil {
		t.Fatal(err)
	}
	diffs, err := op.Debug.Compare(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := drift.Difference{Kind: stores.KindPod, Key: key.String(), Problem: drift.MissingFromCache, APIVersion: lost.ResourceVersion}
	if len(diffs) != 1 || diffs[0] != want {
		t.Fatalf("differences %+v, want only %+v", diffs, want)
	}
}
