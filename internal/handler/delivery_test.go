package handler

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestSync_ALateDeleteLeavesThePodThatReplacedIt: a StatefulSet's web-0 (UID a)
// is deleted and created again (UID b); a reconcile read b from the informer's store, which
// runs ahead of its notifications, and applied it (a's place kept for b, b added). Then a's
// delete notification arrives: it names a, so b stays, charged once, and no place is kept
// for b but the one a left and b took.
func TestSync_ALateDeleteLeavesThePodThatReplacedIt(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	owner := ts.MakeOwner(v1alpha1.OwnerStatefulSet, "ns", "web", "app", "web")
	owner.UID, owner.ReserveOnDelete, owner.ResourceVersion, owner.Replicas = "uid-web", "true", "1", ptr.To[int32](1)
	must(t, h.Add(owner))
	a := ts.MakePod("ns", "web-0", ts.Requests("1", "1Gi"), ts.OnNode("n1"), ts.WithResourceVersion("10"),
		ts.WithLabels("app", "web"), ts.OwnedBy("StatefulSet", "web", "uid-web"))
	a.UID = "a"
	b := a.DeepCopy()
	b.UID, b.ResourceVersion = "b", "20"
	key := types.NamespacedName{Namespace: "ns", Name: "web-0"}
	must(t, h.Sync(key, a, true, Current))
	must(t, h.Sync(key, b, true, Current))
	before := counterValue(t, metrics.FeedReordersTotal.WithLabelValues(string(stores.KindPod), metrics.ReorderLateDelete))
	holdsBefore := h.ReservationHolds() // a's, which b consumed

	must(t, h.Sync(key, a, true, Deleted))

	st, ok := h.PodState(key)
	if !ok || st.Pod.UID != "b" {
		t.Fatalf("after a's late delete the cache holds %v (present %v), want b", st.Pod, ok)
	}
	if info, _ := h.NodeInfo("n1"); info.Requested.MilliCPU != 1000 {
		t.Errorf("n1 requested %dm, want b charged once", info.Requested.MilliCPU)
	}
	if holds := h.ReservationHolds(); !slices.Equal(holds, holdsBefore) {
		t.Errorf("places kept after a's late delete: %v, want %v as before (b runs)", holds, holdsBefore)
	}
	if got := counterValue(t, metrics.FeedReordersTotal.WithLabelValues(string(stores.KindPod), metrics.ReorderLateDelete)) - before; got != 1 {
		t.Errorf("late deletes counted: %v, want 1", got)
	}
	// b's own delete removes it and keeps its place.
	must(t, h.Sync(key, b, true, Deleted))
	if _, ok := h.PodState(key); ok {
		t.Error("b's delete left it in the cache")
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// TestSync_ALateDeleteOfAnotherKindChangesNothing: the same rule for every kind the
// handler holds (a Node deleted and registered again under its name).
func TestSync_ALateDeleteOfAnotherKindChangesNothing(t *testing.T) {
	h, _ := newHandler(t)
	old := ts.MakeNode("n1", "8", "16Gi")
	old.UID, old.ResourceVersion = "old", "1"
	cur := ts.MakeNode("n1", "16", "32Gi")
	cur.UID, cur.ResourceVersion = "cur", "5"
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, old, true, Current))
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, cur, true, Current))
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, old, true, Deleted))
	if info, ok := h.NodeInfo("n1"); !ok || info.Node == nil || info.Node.UID != "cur" {
		t.Fatalf("after the old node's late delete: %+v (present %v), want the current node", info, ok)
	}
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, cur, true, Deleted))
	if _, ok := h.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "n1"}); ok {
		t.Error("the current node's delete left it in the cache")
	}
	// A delete of something the cache never held changes nothing and is no error.
	must(t, h.Sync(types.NamespacedName{Name: "n2"}, ts.MakeNode("n2", "1", "1Gi"), true, Deleted))
	if err := h.Sync(types.NamespacedName{Name: "x"}, &corev1.Service{}, true, Deleted); err == nil {
		t.Error("a kind the cache does not hold was accepted")
	}
}

// TestSync_AGoneObjectIsATypedNilOrADeleteWithoutAUID: a feed hands a gone object as a
// typed nil; an owner, whose key comes from the object, as an Owner naming only its key
// delivered as Deleted. A nil Owner names nothing and is refused, changing nothing.
func TestSync_AGoneObjectIsATypedNilOrADeleteWithoutAUID(t *testing.T) {
	h, _ := newHandler(t)
	n := ts.MakeNode("n1", "8", "16Gi")
	n.UID, n.ResourceVersion = "u1", "1"
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, n, true, Current))
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, (*corev1.Node)(nil), true, Current))
	if _, ok := h.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "n1"}); ok {
		t.Error("a typed nil left the node in the cache")
	}
	// A typed nil delivered as a delete names no UID either: the cached object goes.
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, n, true, Current))
	must(t, h.Sync(types.NamespacedName{Name: "n1"}, (*corev1.Node)(nil), true, Deleted))
	if _, ok := h.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "n1"}); ok {
		t.Error("a typed nil delivered as a delete left the node in the cache")
	}

	rs := &store.Owner{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "rs", UID: "u2", ResourceVersion: "1"}
	key := types.NamespacedName{Namespace: "ns", Name: "rs"}
	must(t, h.Sync(key, rs, true, Current))
	if err := h.Sync(key, (*store.Owner)(nil), true, Current); !errors.Is(err, store.ErrInvalidObject) {
		t.Errorf("a nil owner: %v, want ErrInvalidObject", err)
	}
	if _, ok := lastSeenOwner(h, rs.Key()); !ok {
		t.Fatal("the refused nil owner dropped the cached one")
	}
	must(t, h.Sync(key, &store.Owner{Type: rs.Type, Namespace: "ns", Name: "rs"}, true, Deleted))
	if _, ok := lastSeenOwner(h, rs.Key()); ok {
		t.Error("a delete naming the owner's key left it in the cache")
	}
}

// TestSync_VersionsThatWentBackwardsAreTaken: after an etcd restore without
// --bump-revision every version is older than the cache's. A Current delivery of such an
// object is left alone (it may be a late notification); a Backwards one (the informer saw
// the version go backwards, or the verify loop found the key drifted) is taken and counted.
func TestSync_VersionsThatWentBackwardsAreTaken(t *testing.T) {
	h, _ := newHandler(t)
	must(t, h.Add(ts.MakeNode("n1", "8", "16Gi")))
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	p := ts.MakePod("ns", "p", ts.Requests("1", "1Gi"), ts.OnNode("n1"), ts.WithResourceVersion("100"))
	p.UID = "p"
	must(t, h.Sync(key, p, true, Current))
	restored := p.DeepCopy()
	restored.ResourceVersion = "40"
	restored.Spec.Containers[0].Resources.Requests = ts.MakePod("x", "x", ts.Requests("2", "1Gi")).Spec.Containers[0].Resources.Requests
	must(t, h.Sync(key, restored, true, Current))
	if st, _ := h.PodState(key); st.APIPod.ResourceVersion != "100" {
		t.Fatalf("a Current delivery of an older version was taken: %s", st.APIPod.ResourceVersion)
	}
	before := counterValue(t, metrics.FeedReordersTotal.WithLabelValues(string(stores.KindPod), metrics.ReorderVersionBackwards))
	must(t, h.Sync(key, restored, true, Backwards))
	if st, _ := h.PodState(key); st.APIPod.ResourceVersion != "40" {
		t.Fatalf("a Backwards delivery was not taken: the cache holds version %s", st.APIPod.ResourceVersion)
	}
	if info, _ := h.NodeInfo("n1"); info.Requested.MilliCPU != 2000 {
		t.Errorf("n1 requested %dm, want the restored pod's 2000m", info.Requested.MilliCPU)
	}
	if got := counterValue(t, metrics.FeedReordersTotal.WithLabelValues(string(stores.KindPod), metrics.ReorderVersionBackwards)) - before; got != 1 {
		t.Errorf("backwards versions counted: %v, want 1", got)
	}
	// The same for a kind other than Pod.
	n := ts.MakeNode("n2", "8", "16Gi")
	n.ResourceVersion = "90"
	must(t, h.Sync(types.NamespacedName{Name: "n2"}, n, true, Current))
	back := ts.MakeNode("n2", "4", "16Gi")
	back.ResourceVersion = "30"
	must(t, h.Sync(types.NamespacedName{Name: "n2"}, back, true, Current))
	if got, _ := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n2"}); got != "90" {
		t.Fatalf("a Current delivery of an older node was taken")
	}
	must(t, h.Sync(types.NamespacedName{Name: "n2"}, back, true, Backwards))
	if got, _ := h.LastSeenVersion(stores.KindNode, "", types.NamespacedName{Name: "n2"}); got != "30" {
		t.Errorf("a Backwards node was not taken: %s", got)
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Error(errs)
	}
}

// lastSeenOwner returns the workload owner the stores are charged with.
func lastSeenOwner(h *Handler, key store.OwnerKey) (*store.Owner, bool) {
	o, ok := h.LastSeen(stores.KindOwner, string(key.Type), types.NamespacedName{Namespace: key.Namespace, Name: key.Name})
	if !ok {
		return nil, false
	}
	return o.(*store.Owner), true
}

// TestEdgeAndSync_RefuseWhatIsNotAnObjectOfAKindUnderItsKey: an object of a type the cache
// keeps no kind of, an update between two kinds and a key that cannot name the object's
// kind are refused with ErrInvalidObject, and change nothing.
func TestEdgeAndSync_RefuseWhatIsNotAnObjectOfAKindUnderItsKey(t *testing.T) {
	h, _ := newHandler(t)
	n := ts.MakeNode("n1", "8", "16Gi")
	must(t, h.Add(n))
	p := ts.MakePod("ns", "p")
	for name, err := range map[string]error{
		"a Secret":            h.Add(&corev1.Secret{}),
		"untyped nil":         h.Add(nil),
		"a node to a pod":     h.Update(n, p),
		"a pod to a node":     h.Update(p, n),
		"a namespaced node":   h.Sync(types.NamespacedName{Namespace: "ns", Name: "n1"}, n, true, Current),
		"a persistent volume": h.Sync(types.NamespacedName{Name: "pv"}, (*corev1.PersistentVolume)(nil), true, Current),
	} {
		// An EventError is counted and logged as every refused event is.
		var counted *stores.EventError
		if !errors.Is(err, store.ErrInvalidObject) || !errors.As(err, &counted) {
			t.Errorf("%s: %v, want an EventError of ErrInvalidObject", name, err)
		}
	}
	if _, ok := h.LastSeen(stores.KindNode, "", types.NamespacedName{Name: "n1"}); !ok {
		t.Error("a refused event dropped the node")
	}
	if _, ok := h.PodState(store.PodKey(p)); ok {
		t.Error("a refused update added the pod")
	}
}
