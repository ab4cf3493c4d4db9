package controllers

import (
	"context"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestFeed_ALateDeleteDoesNotRemoveThePodThatReplacedIt plays the order a real informer can
// deliver: web-0 (UID a) is deleted and created again (UID b) in the informer's store, a
// reconcile queued earlier reads b there and applies it, and only then are a's delete and
// b's add notified. The delete names a: b must stay cached, charged once, with no place kept
// for it (the leader would create a Reservation for a running pod and charge its node twice).
func TestFeed_ALateDeleteDoesNotRemoveThePodThatReplacedIt(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.Add(ts.MakeNode("n1", "8", "16Gi")))
	owner := ts.MakeOwner(v1alpha1.OwnerStatefulSet, "ns", "web", "app", "web")
	owner.UID, owner.ReserveOnDelete, owner.ResourceVersion, owner.Replicas = "uid-web", "true", "1", ptr.To[int32](1)
	must(h.Add(owner))

	informer := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	f := &feed{name: "pod-feed", kind: stores.KindPod, obj: &corev1.Pod{}, store: informer,
		apply: (&podSync{handler: h, log: logr.Discard()}).apply, log: logr.Discard(), changed: podChanged,
		retrying: map[types.NamespacedName]struct{}{}, repairs: map[types.NamespacedName]struct{}{}}
	f.ctx = context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "web-0"}
	a := ts.MakePod("ns", "web-0", ts.Requests("1", "1Gi"), ts.OnNode("n1"), ts.WithResourceVersion("10"),
		ts.WithLabels("app", "web"), ts.OwnedBy("StatefulSet", "web", "uid-web"))
	a.UID = "a"
	mustStore(t, informer.Add(a))
	f.onAdd(a, true)

	b := a.DeepCopy()
	b.UID, b.ResourceVersion = "b", "20"
	mustStore(t, informer.Delete(a))
	mustStore(t, informer.Add(b))
	if _, err := f.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	holdsBefore := h.ReservationHolds() // a's, which b took
	f.onDelete(a)
	if st, ok := h.PodState(key); !ok || st.Pod.UID != "b" {
		t.Fatalf("after a's late delete the cache holds %v (present %v), want b", st.Pod, ok)
	}
	if holds := h.ReservationHolds(); !slices.Equal(holds, holdsBefore) {
		t.Errorf("places kept after a's late delete: %v, want %v as before (b runs)", holds, holdsBefore)
	}
	f.onAdd(b, false)
	if info, _ := h.NodeInfo("n1"); info.Requested.MilliCPU != 1000 {
		t.Errorf("n1 requested %dm, want b charged once", info.Requested.MilliCPU)
	}
	// A tombstone of b (a relist found it gone) names b: it goes.
	mustStore(t, informer.Delete(b))
	f.onDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/web-0", Obj: b})
	if _, ok := h.PodState(key); ok {
		t.Error("b's tombstone left it in the cache")
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// TestFeed_ARelistWhoseVersionsWentBackwardsIsTaken: after an etcd restore without
// --bump-revision the informer relists older versions of what it held; the update it
// notifies goes backwards, and the cache takes it rather than keep the lost version.
func TestFeed_ARelistWhoseVersionsWentBackwardsIsTaken(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	f := &feed{name: "node-feed", kind: stores.KindNode, obj: &corev1.Node{},
		apply: syncAs(logr.Discard(), stores.KindNode, delivered[*corev1.Node](h), nil), log: logr.Discard(),
		retrying: map[types.NamespacedName]struct{}{}, repairs: map[types.NamespacedName]struct{}{}}
	f.ctx = context.Background()
	n := ts.MakeNode("n1", "8", "16Gi")
	n.ResourceVersion = "500"
	f.onAdd(n, true)
	restored := ts.MakeNode("n1", "4", "8Gi")
	restored.ResourceVersion = "120"
	f.onUpdate(n, restored)
	if got, _ := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n1"}); got != "120" {
		t.Fatalf("the cache kept version %s after the informer went back to 120", got)
	}
}

// TestFeed_ARepairTakesTheInformersOlderVersion: the verify loop found a key whose cached
// version the informer no longer holds (it holds an older one, as after an etcd restore);
// a reconcile of the key as a repair takes the informer's object, where a plain reconcile
// leaves a version it cannot tell from a late notification.
func TestFeed_ARepairTakesTheInformersOlderVersion(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	informer := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	f := &feed{name: "node-feed", kind: stores.KindNode, obj: &corev1.Node{}, store: informer,
		apply: syncAs(logr.Discard(), stores.KindNode, delivered[*corev1.Node](h), nil), log: logr.Discard(),
		retrying: map[types.NamespacedName]struct{}{}, repairs: map[types.NamespacedName]struct{}{}}
	f.ctx = context.Background()
	n := ts.MakeNode("n1", "8", "16Gi")
	n.ResourceVersion = "500"
	if err := h.Sync(types.NamespacedName{Name: "n1"}, n, true, handler.Current); err != nil {
		t.Fatal(err)
	}
	restored := ts.MakeNode("n1", "4", "8Gi")
	restored.ResourceVersion = "120"
	mustStore(t, informer.Add(restored))
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: "n1"}}
	if _, err := f.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n1"}); got != "500" {
		t.Fatalf("a plain reconcile took version %s", got)
	}
	f.enqueueRepair(req.NamespacedName)
	if _, err := f.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n1"}); got != "120" {
		t.Fatalf("the repair left version %s, want the informer's 120", got)
	}
	if len(f.repairs) != 0 {
		t.Errorf("repairs left after the reconcile: %v", f.repairs)
	}
}
