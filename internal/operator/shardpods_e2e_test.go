package operator

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"

	"github.com/seed0f91f25e/multicache/internal/nodepods"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestShard_HoldsOnlyItsNodesPodsAndTheUnboundOnes: a shard watches the pods of its nodes
// (one spec.nodeName watch per node) and the unbound pods, never the others; a node joining
// or leaving brings or takes its pods; an assumed pod survives its bind (the pod leaves the
// unbound watch before its node's watch reports it); a pod bound elsewhere is dropped; the
// comparison stays empty.
func TestShard_HoldsOnlyItsNodesPodsAndTheUnboundOnes(t *testing.T) {
	const shardKey = "multicache.dev/shard"
	ns := newNamespace(t)
	here := withoutUID(ts.MakeNode("sp-here", "8", "16Gi", shardKey, "sp"))
	there := withoutUID(ts.MakeNode("sp-there", "8", "16Gi", shardKey, "sp-other"))
	onHere := ts.MakePod(ns, "on-here", ts.OnNode("sp-here"), ts.Requests("1", "1Gi"))
	// Annotated to keep its place when deleted: leaving the shard is not a deletion.
	onThere := ts.MakePod(ns, "on-there", ts.OnNode("sp-there"), ts.Requests("1", "1Gi"),
		ts.WithLabels("app", "there"), ts.WithAnnotations(v1alpha1.ReserveOnDeleteAnnotation, "true"))
	pending := ts.MakePod(ns, "pending", ts.Requests("1", "1Gi"))
	create(t, here, there, withoutUID(onHere), withoutUID(onThere), withoutUID(pending))

	op := startOperator(t, func(o *Options) { o.SubClusterKey, o.SubCluster = shardKey, "sp" })
	shard, ok := op.Manager.GetCache().(*nodepods.Cache)
	if !ok {
		t.Fatalf("a shard's manager cache is %T, want *nodepods.Cache", op.Manager.GetCache())
	}
	held := func(want ...string) func() (bool, string) {
		return func() (bool, string) {
			var got []string
			for _, p := range shard.Set.List() {
				if p.Namespace == ns {
					got = append(got, p.Name)
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			return slices.Equal(got, want), fmt.Sprintf("holds %v, want %v", got, want)
		}
	}
	cached := func(name string, want bool) func() (bool, string) {
		return func() (bool, string) {
			_, ok := op.Cache.LastSeenVersions(stores.KindPod)[ns+"/"+name]
			return ok == want, fmt.Sprintf("%s cached %v, want %v", name, ok, want)
		}
	}
	eventually(t, "the shard holds its node's pod and the unbound one", held("on-here", "pending"))
	eventually(t, "the shard's pod is cached", cached("on-here", true))
	eventually(t, "the other shard's pod is not cached", cached("on-there", false))
	consistent(t, op)

	// An assumed pod survives its bind: the cache holds it at every moment until confirmed.
	key := types.NamespacedName{Namespace: ns, Name: "pending"}
	assumed := pending.DeepCopy()
	if err := env.Client.Get(ctx(), key, assumed); err != nil {
		t.Fatal(err)
	}
	assumed.Spec.NodeName = "sp-here"
	if err := op.Cache.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	mustBind(t, env.Client, pending, "sp-here")
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, ok := op.Cache.PodState(key)
		if !ok {
			t.Fatal("the assumed pod was dropped while it moved from the unbound watch to its node's")
		}
		if st.State == store.PodAdded && st.Pod.Spec.NodeName == "sp-here" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bound pod was not confirmed: %s on %q", st.State, st.Pod.Spec.NodeName)
		}
		time.Sleep(time.Millisecond)
	}
	eventually(t, "the bound pod is held through its node's watch", held("on-here", "pending"))
	if shard.Set.OnNode("sp-here") == nil {
		t.Fatal("the node's watch holds nothing")
	}
	consistent(t, op)

	// A pod bound to another shard's node leaves the shard.
	away := ts.MakePod(ns, "away", ts.Requests("1", "1Gi"))
	create(t, withoutUID(away))
	eventually(t, "the new unbound pod is held", held("on-here", "pending", "away"))
	mustBind(t, env.Client, away, "sp-there")
	eventually(t, "a pod bound elsewhere is dropped", held("on-here", "pending"))
	eventually(t, "and not cached", cached("away", false))
	consistent(t, op)

	// A node joining the shard brings its pods; leaving takes them.
	there.Labels[shardKey] = "sp"
	if err := env.Client.Update(ctx(), there); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the joining node's pods are held", held("on-here", "pending", "on-there", "away"))
	eventually(t, "and cached", cached("on-there", true))
	consistent(t, op)
	there.Labels[shardKey] = "sp-other"
	if err := env.Client.Update(ctx(), there); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the leaving node's pods are dropped", held("on-here", "pending"))
	eventually(t, "and not cached", cached("on-there", false))
	if shard.Set.Watches("sp-there") {
		t.Fatal("the node that left is still watched")
	}
	// Out of scope, not deleted: no place is kept for the running pod.
	time.Sleep(time.Second)
	if holds := op.Cache.ReservationHolds(); len(holds) != 0 {
		t.Fatalf("holds %v for pods of a node that left the shard", holds)
	}
	var rsvs v1alpha1.ReservationList
	if err := env.Client.List(ctx(), &rsvs, client.InNamespace(ns)); err != nil || len(rsvs.Items) != 0 {
		t.Fatalf("Reservations %d (%v) for pods of a node that left the shard, want none", len(rsvs.Items), err)
	}
	consistent(t, op)

	// A deleted pod of the shard is gone.
	deleteNow(t, onHere)
	eventually(t, "a deleted pod is dropped", cached("on-here", false))
	consistent(t, op)
	deleteNow(t, here, there)
}

// TestShard_WholeClusterModeIsUnchanged: without a sub-cluster, the manager's own cache
// holds the pods.
func TestShard_WholeClusterModeIsUnchanged(t *testing.T) {
	op := startOperator(t)
	if _, ok := op.Manager.GetCache().(*nodepods.Cache); ok {
		t.Fatal("a whole-cluster replica uses a shard's cache")
	}
	ns := newNamespace(t)
	p := ts.MakePod(ns, "p")
	create(t, withoutUID(p))
	eventually(t, "the pod is cached", func() (bool, string) {
		_, ok := op.Cache.LastSeenVersions(stores.KindPod)[ns+"/p"]
		return ok, "not cached"
	})
	consistent(t, op)
}

// TestShard_StoresKeepTheWatchesOwnPods: a shard's stores hold each pod as its node's watch
// handed it out, not a copy, after the start and after its node changed (a change that does
// not move the node in or out of the shard re-reconciles nothing): a reconcile applies the
// cache's read, a copy of the pod's struct, which the stores would keep besides the watch's
// own. The copies are made within milliseconds of the node's event; the check watches for
// them for two seconds, so it can miss them on a stalled machine, never report them falsely.
func TestShard_StoresKeepTheWatchesOwnPods(t *testing.T) {
	const shardKey = "multicache.dev/shard"
	ns := newNamespace(t)
	node := withoutUID(ts.MakeNode("own-here", "8", "16Gi", shardKey, "own"))
	a := ts.MakePod(ns, "a", ts.OnNode("own-here"), ts.Requests("1", "1Gi"))
	b := ts.MakePod(ns, "b", ts.OnNode("own-here"), ts.Requests("1", "1Gi"))
	create(t, node, withoutUID(a), withoutUID(b))
	defer deleteNow(t, node)

	op := startOperator(t, func(o *Options) { o.SubClusterKey, o.SubCluster = shardKey, "own" })
	shard := op.Manager.GetCache().(*nodepods.Cache)
	own := func() (bool, string) {
		for _, name := range []string{"a", "b"} {
			key := types.NamespacedName{Namespace: ns, Name: name}
			st, ok := op.Cache.PodState(key)
			if !ok {
				return false, name + " not cached"
			}
			held, ok := shard.Set.Get(key.String())
			if !ok || st.Pod != held || st.APIPod != held {
				return false, fmt.Sprintf("%s: the stores hold %p (API %p), the node's watch %p", name, st.Pod, st.APIPod, held)
			}
		}
		return true, ""
	}
	stillOwn := func(what string) {
		t.Helper()
		eventually(t, what, own)
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if ok, msg := own(); !ok {
				t.Fatalf("%s: %s", what, msg)
			}
		}
	}
	stillOwn("after the start, the stores hold the watch's pods")

	node.Labels["unrelated"] = "changed"
	if err := env.Client.Update(ctx(), node); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the shard sees the node's change", func() (bool, string) {
		var n corev1.Node
		err := op.Manager.GetCache().Get(ctx(), types.NamespacedName{Name: node.Name}, &n)
		return err == nil && n.Labels["unrelated"] == "changed", fmt.Sprintf("labels %v, error %v", n.Labels, err)
	})
	stillOwn("after the node's change, the stores hold the watch's pods")
	consistent(t, op)
}
