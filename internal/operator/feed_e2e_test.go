package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// kindCase drives one kind through create, update and delete.
type kindCase struct {
	kind stores.Kind
	// obj is created; change modifies it for the update (through status when status is set).
	obj    client.Object
	change func(client.Object)
	status bool
	// cached reports whether the object is in the stores; updated whether the change is.
	cached, updated func() bool
	// writesStatus marks kinds whose status the operator writes: their updates include the
	// operator's own status writes, so they are not counted exactly.
	writesStatus bool
}

// TestFeed_EveryKindReachesTheStoresExactlyOnce creates, updates and deletes one object of
// every kind through the API and checks, through the reader and the dump, that each event
// reached the stores, as exactly one add, update and delete, and that none was rejected.
// It logs the lag from the API write returning to the object being in the store.
func TestFeed_EveryKindReachesTheStoresExactlyOnce(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	node := ts.MakeNode("feed-node", "8", "16Gi")
	node.UID = ""
	if err := env.Client.Create(ctx(), node); err != nil {
		t.Fatal(err)
	}
	consistent(t, op)
	h := op.Cache
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	dump := func(section string) map[string]json.RawMessage {
		var raw bytes.Buffer
		_ = h.WriteDump(ctx(), &raw, handler.DumpCompact)
		var d map[string]map[string]json.RawMessage
		_ = json.Unmarshal(raw.Bytes(), &d)
		return d[section]
	}
	inDump := func(section, k string) bool { _, ok := dump(section)[k]; return ok }

	rsTemplate := map[string]string{"app": "web"}
	cases := []kindCase{
		{
			kind: stores.KindNode, obj: withoutUID(ts.MakeNode("feed-node-2", "4", "8Gi")),
			change: func(o client.Object) { o.(*corev1.Node).Labels = map[string]string{"zone": "b"} },
			cached: func() bool { _, ok := h.NodeInfo("feed-node-2"); return ok && inDump("nodes", "feed-node-2") },
			updated: func() bool {
				info, ok := h.NodeInfo("feed-node-2")
				return ok && info.Labels()["zone"] == "b"
			},
		},
		{
			kind: stores.KindNMNode, obj: withoutUID(ts.MakeNMNode("feed-node", "16", "32Gi", "14", "30Gi")),
			change: func(o client.Object) {
				o.(*v1alpha1.NMNode).Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
			},
			cached: func() bool { info, ok := h.NodeInfo("feed-node"); return ok && info.NMNode != nil },
			updated: func() bool {
				info, ok := h.NodeInfo("feed-node")
				return ok && info.NMNode != nil && len(info.NMNode.Spec.Taints) == 1
			},
		},
		{
			kind: stores.KindCNR, obj: withoutUID(ts.MakeCNR("feed-node", "4", "8Gi")),
			change: func(o client.Object) {
				o.(*v1alpha1.CustomNodeResource).Spec.NodeResourceProperties = []v1alpha1.NodeResourceProperty{{Name: "numa", Value: []string{"2"}}}
			},
			cached: func() bool { info, ok := h.NodeInfo("feed-node"); return ok && info.CNR != nil },
			updated: func() bool {
				info, ok := h.NodeInfo("feed-node")
				return ok && info.CNR != nil && len(info.CNR.Spec.NodeResourceProperties) == 1
			},
		},
		{
			kind: stores.KindPod, obj: withoutUID(ts.MakePod(ns, "feed-pod", ts.OnNode("feed-node"), ts.Requests("1", "1Gi"))),
			status: true,
			change: func(o client.Object) { o.(*corev1.Pod).Status.Phase = corev1.PodRunning },
			cached: func() bool {
				st, ok := h.PodState(key("feed-pod"))
				info, _ := h.NodeInfo("feed-node")
				return ok && st.State == store.PodAdded && info != nil && len(info.Pods) == 1 && inDump("pods", ns+"/feed-pod")
			},
			updated: func() bool {
				st, ok := h.PodState(key("feed-pod"))
				return ok && st.Pod.Status.Phase == corev1.PodRunning
			},
		},
		{
			kind: stores.KindPodGroup, obj: withoutUID(ts.MakePodGroup(ns, "feed-pg", 2)), writesStatus: true,
			change: func(o client.Object) { o.(*v1alpha1.PodGroup).Spec.MinMember = 4 },
			cached: func() bool { _, ok := h.PodGroup(key("feed-pg")); return ok && inDump("podGroups", ns+"/feed-pg") },
			updated: func() bool {
				g, ok := h.PodGroup(key("feed-pg"))
				return ok && g.PodGroup != nil && g.PodGroup.Spec.MinMember == 4
			},
		},
		{
			kind: stores.KindPDB, obj: withoutUID(ts.MakePDB(ns, "feed-pdb", 0, "app", "web")),
			change: func(o client.Object) {
				o.(*policyv1.PodDisruptionBudget).Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
			},
			cached: func() bool { return inDump("pdbs", ns+"/feed-pdb") },
			updated: func() bool {
				var d struct{ Selector string }
				_ = json.Unmarshal(dump("pdbs")[ns+"/feed-pdb"], &d)
				return d.Selector == "app=db"
			},
		},
		{
			kind: stores.KindOwner, obj: replicaSet(ns, "feed-rs", rsTemplate),
			change: func(o client.Object) {
				o.(*appsv1.ReplicaSet).Spec.Template.Labels = map[string]string{"app": "web", "tier": "front"}
			},
			cached: func() bool {
				_, ok := lastSeenOwner(h, store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "feed-rs"})
				return ok
			},
			updated: func() bool {
				o, ok := lastSeenOwner(h, store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "feed-rs"})
				return ok && o.Labels["tier"] == "front"
			},
		},
		{
			kind: stores.KindMovement, writesStatus: true,
			obj:    withoutUID(ts.MakeMovement("feed-mvt-"+ns, v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "feed-rs"}, "feed-node", 1)),
			change: func(o client.Object) { o.(*v1alpha1.Movement).Spec.Creator = "someone-else" },
			cached: func() bool { _, ok := h.Movement("feed-mvt-" + ns); return ok && inDump("movements", "feed-mvt-"+ns) },
			updated: func() bool {
				v, ok := h.Movement("feed-mvt-" + ns)
				return ok && v.Movement != nil && v.Movement.Spec.Creator == "someone-else"
			},
		},
		{
			kind: stores.KindReservation, writesStatus: true,
			obj:    withoutUID(ts.MakeReservation(ns, "feed-rsv", "feed-node", "1", "1Gi", "app", "web")),
			change: func(o client.Object) { o.(*v1alpha1.Reservation).Spec.TTLSeconds = ptr.To[int64](3600) },
			cached: func() bool {
				_, ok := h.Reservation(key("feed-rsv"))
				return ok && inDump("reservations", ns+"/feed-rsv")
			},
			updated: func() bool {
				v, ok := h.Reservation(key("feed-rsv"))
				return ok && v.Reservation.Spec.TTLSeconds != nil && *v.Reservation.Spec.TTLSeconds == 3600
			},
		},
	}

	var lags []time.Duration
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			k := string(tc.kind)
			adds, updates, deletes := eventCount(t, k, "add", "ok"), eventCount(t, k, "update", "ok"), eventCount(t, k, "delete", "ok")
			rejected := rejectedCount(t, k)

			obj := tc.obj
			if err := env.Client.Create(ctx(), obj); err != nil {
				t.Fatal(err)
			}
			lag := lagUntil(t, "the object is in the stores", tc.cached)
			lags = append(lags, lag)
			t.Logf("API write to store: %v", lag)
			consistent(t, op)
			if got := eventCount(t, k, "add", "ok") - adds; got != 1 {
				t.Errorf("create: %v add events, want 1", got)
			}

			if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(obj), obj); err != nil {
				t.Fatal(err)
			}
			tc.change(obj)
			write := env.Client.Update
			if tc.status {
				write = func(c2 context.Context, o client.Object, _ ...client.UpdateOption) error {
					return env.Client.Status().Update(c2, o)
				}
			}
			if err := write(ctx(), obj); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the update is in the stores", func() (bool, string) { return tc.updated(), "not yet" })
			consistent(t, op)
			got := eventCount(t, k, "update", "ok") - updates
			if (!tc.writesStatus && got != 1) || got < 1 {
				t.Errorf("update: %v update events, want 1 (more only for kinds whose status the operator writes)", got)
			}

			if err := env.Client.Delete(ctx(), obj, client.GracePeriodSeconds(0)); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the object is gone from the stores", func() (bool, string) { return !tc.cached(), "still cached" })
			consistent(t, op)
			if got := eventCount(t, k, "delete", "ok") - deletes; got != 1 {
				t.Errorf("delete: %v delete events, want 1", got)
			}
			if got := rejectedCount(t, k) - rejected; got != 0 {
				t.Errorf("%v events rejected", got)
			}
		})
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if len(lags) > 0 {
		t.Logf("API write to store lag over %d kinds: min %v, median %v, max %v", len(lags), lags[0], lags[len(lags)/2], lags[len(lags)-1])
	}
}

// lagUntil polls cond every millisecond and returns how long it took to hold.
func lagUntil(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > time.Minute {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

func withoutUID[T client.Object](obj T) T {
	obj.SetUID("")
	return obj
}

func replicaSet(ns, name string, template map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": template["app"]}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: template},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				}}},
			},
		},
	}
}

// lastSeenOwner returns the workload owner the stores are charged with.
func lastSeenOwner(h *handler.Handler, key store.OwnerKey) (*store.Owner, bool) {
	o, ok := h.LastSeen(stores.KindOwner, string(key.Type), types.NamespacedName{Namespace: key.Namespace, Name: key.Name})
	if !ok {
		return nil, false
	}
	return o.(*store.Owner), true
}
