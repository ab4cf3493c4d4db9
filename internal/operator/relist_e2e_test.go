package operator

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestRelist_DeletesMissedWhileTheAPIServerWasDownAreApplied stops the API server, deletes
// objects straight from etcd (so no watch event can tell the operator), starts the API
// server again and checks that after the relist the cache equals the API: every delete
// whose final state the informer lost still removed exactly what was charged.
func TestRelist_DeletesMissedWhileTheAPIServerWasDownAreApplied(t *testing.T) {
	t.Parallel() // restarts the package's API server: parallel only with tests that do not use it
	op := startOperator(t)
	ns := newNamespace(t)
	node := "relist-node"
	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")), withoutUID(ts.MakeNMNode(node, "8", "16Gi", "8", "16Gi")))
	kept := withoutUID(ts.MakePod(ns, "kept", ts.OnNode(node), ts.Requests("1", "1Gi")))
	gone := withoutUID(ts.MakePod(ns, "gone", ts.OnNode(node), ts.Requests("2", "1Gi")))
	create(t, kept, gone, ts.MakeReservation(ns, "hold", node, "3", "1Gi", "app", "none"))
	consistent(t, op)
	info, _ := op.Cache.NodeInfo(node)
	if info.Requested.MilliCPU != 6000 {
		t.Fatalf("before the restart: requested %dm, want 6000m (two pods and the reservation)", info.Requested.MilliCPU)
	}

	start := time.Now()
	err := env.RestartAPIServer(context.Background(), func() error {
		etcd := env.Etcd()
		for _, key := range []string{
			"/registry/pods/" + ns + "/gone",
			"/registry/cache.multicache.dev/nmnodes/" + node,
			"/registry/cache.multicache.dev/reservations/" + ns + "/hold",
		} {
			deleted, err := etcd.Delete(context.Background(), key)
			if err != nil {
				return err
			}
			if deleted != 1 {
				return fmt.Errorf("etcd key %s: deleted %d", key, deleted)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	consistent(t, op)
	t.Logf("API server down and up again in %v; cache equal to the API %v later", restarted.Sub(start), time.Since(restarted))
	if _, ok := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: "gone"}); ok {
		t.Error("the pod deleted while the API server was down is still cached")
	}
	if _, ok := op.Cache.Reservation(types.NamespacedName{Namespace: ns, Name: "hold"}); ok {
		t.Error("the reservation deleted while the API server was down is still cached")
	}
	info, _ = op.Cache.NodeInfo(node)
	if info.Requested.MilliCPU != 1000 || !info.Reserved.IsZero() || info.NMNode != nil || len(info.Placeholders) != 0 {
		t.Errorf("after the relist: requested %dm reserved %v NMNode %v; want only the kept pod's 1000m",
			info.Requested.MilliCPU, info.Reserved.ResourceList(), info.NMNode != nil)
	}
	for _, err := range op.Cache.CheckInvariants() {
		t.Error("invariant:", err)
	}
	if st, ok := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: "kept"}); !ok || st.State != store.PodAdded {
		t.Errorf("the kept pod: %+v %v", st, ok)
	}
	// The relist decoded the kept pod again at the same version: the cache swaps to the
	// informer's new object (the pod feed's objectReplaced predicate), lest the old one stay alive.
	inf, err := op.Manager.GetCache().GetInformer(ctx(), &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	store := inf.(interface{ GetStore() toolscache.Store }).GetStore()
	eventually(t, "the cache holds the informer's relisted pod", func() (bool, string) {
		st, _ := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: "kept"})
		item, exists, _ := store.GetByKey(ns + "/kept")
		return exists && st.APIPod == item.(*corev1.Pod) && st.Pod == st.APIPod, "the cache holds the object before the relist"
	})
	deleteNow(t, kept)
}
