package multicache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/handler"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// forkWorld is the cluster the fork tests start from: nodes n0..n(nodes-1) of 8 CPUs, pods
// spread over them (a few finished, a few not placed yet), some in a gang of minMember 3,
// some under a budget allowing 2.
type forkWorld struct {
	nodes int
	pods  map[types.NamespacedName]*corev1.Pod
}

func newForkWorld(rng *rand.Rand, nodes, pods int) forkWorld {
	w := forkWorld{nodes: nodes, pods: map[types.NamespacedName]*corev1.Pod{}}
	for i := range pods {
		name := fmt.Sprintf("p%d", i)
		opts := []ts.PodOption{ts.OnNode(fmt.Sprintf("n%d", rng.IntN(nodes))), ts.WithUID("uid-" + name),
			ts.Requests([]string{"100m", "250m", "500m"}[rng.IntN(3)], []string{"128Mi", "1Gi"}[rng.IntN(2)])}
		switch i % 4 {
		case 0:
			opts = append(opts, ts.InGroup("gang"))
		case 1:
			opts = append(opts, ts.WithLabels("app", "web"))
		}
		p := ts.MakePod("ns", name, opts...)
		switch {
		case i%5 == 0:
			p.Status.Phase = corev1.PodRunning
		case i%9 == 8:
			p.Status.Phase = corev1.PodSucceeded
		case i%13 == 12:
			p.Spec.NodeName = ""
		}
		w.pods[store.PodKey(p)] = p
	}
	return w
}

// cache builds a handler holding the world with the given pods and without removed nodes.
func (w forkWorld) cache(t *testing.T, pods map[types.NamespacedName]*corev1.Pod, removed map[string]bool) *handler.Handler {
	t.Helper()
	h := newHandler(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range w.nodes {
		if name := fmt.Sprintf("n%d", i); !removed[name] {
			must(h.Add(ts.MakeNode(name, "8", "32Gi")))
		}
	}
	must(h.Add(ts.MakePodGroup("ns", "gang", 3)))
	must(h.Add(ts.MakePDB("ns", "budget", 2, "app", "web")))
	for _, p := range pods {
		must(h.Add(p))
	}
	return h
}

func (w forkWorld) snapshot(t *testing.T) *Snapshot {
	t.Helper()
	r := readerOf(w.cache(t, w.pods, nil))
	snap := r.NewSnapshot(SnapshotOptions{})
	if err := r.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestFork_ChangesAreErrorsNamingWhatToFix(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(1, 2)), 2, 4)
	snap := w.snapshot(t)
	f := snap.Fork()
	p0 := w.pods[types.NamespacedName{Namespace: "ns", Name: "p0"}]
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"add to an unknown node":   {f.AddPod(ts.MakePod("ns", "new"), "nowhere"), `adding pod ns/new to node "nowhere": the fork has no such node`},
		"add a pod already placed": {f.AddPod(p0, "n1"), "adding pod ns/p0 to node \"n1\": it is on node \"" + p0.Spec.NodeName + "\" already: RemovePod it first"},
		"remove an unknown pod":    {f.RemovePod(types.NamespacedName{Namespace: "ns", Name: "ghost"}), "removing pod ns/ghost: the fork holds no such pod"},
		"remove an unknown node":   {f.RemoveNode("nowhere"), `removing node "nowhere": the fork has no such node`},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to say %q", name, tc.err, tc.want)
		}
	}
	if err := f.RemoveNode("n1"); err != nil {
		t.Fatal(err)
	}
	if err := f.AddPod(ts.MakePod("ns", "new"), "n1"); err == nil || !strings.Contains(err.Error(), "no such node") {
		t.Errorf("adding to a removed node: %v, want no such node", err)
	}
}

func TestFork_NestsRevertsAndNeverChangesTheSnapshot(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(3, 4)), 3, 12)
	snap := w.snapshot(t)
	before := answers(snap)
	key := types.NamespacedName{Namespace: "ns", Name: "p1"}
	from := w.pods[key].Spec.NodeName
	to := map[string]string{"n0": "n1", "n1": "n2", "n2": "n0"}[from]

	parent := snap.Fork()
	if err := parent.RemovePod(key); err != nil {
		t.Fatal(err)
	}
	child := parent.Fork()
	if err := child.AddPod(w.pods[key], to); err != nil {
		t.Fatal(err)
	}
	if ps, ok := child.PodState(key); !ok || ps.Pod.Spec.NodeName != to || ps.State != store.PodAssumed {
		t.Errorf("child: %s is %+v %v, want assumed on %s", key, ps, ok, to)
	}
	if _, ok := parent.PodState(key); ok {
		t.Errorf("the parent sees its child's change")
	}
	child.Revert()
	if _, ok := child.PodState(key); ok {
		t.Errorf("a reverted child lost its parent's removal")
	}
	parent.Revert()
	if ps, ok := parent.PodState(key); !ok || ps.Pod.Spec.NodeName != from {
		t.Errorf("reverted parent: %s is %+v, want back on %s", key, ps, from)
	}
	sameAnswers(t, "the snapshot after forks", answers(snap), before)
}

func TestFork_FailsOnceItsSnapshotMoved(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(5, 6)), 2, 4)
	h := w.cache(t, w.pods, nil)
	r := readerOf(h)
	snap := r.NewSnapshot(SnapshotOptions{})
	if err := r.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	f := snap.Fork()
	if err := h.Add(ts.MakeNode("late", "1", "1Gi")); err != nil {
		t.Fatal(err)
	}
	if err := r.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := f.RemovePod(types.NamespacedName{Namespace: "ns", Name: "p0"}); err != ErrSnapshotMoved {
		t.Errorf("a change after the snapshot moved: %v, want ErrSnapshotMoved", err)
	}
}

// TestFork_AgreesWithACacheBuiltWithTheSameChanges is the model: random forks, moves, pod
// and node removals and reverts, each fork's answers compared with those of a fresh cache
// holding the world as that fork has changed it.
func TestFork_AgreesWithACacheBuiltWithTheSameChanges(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		w := newForkWorld(rng, 5, 30)
		snap := w.snapshot(t)

		type level struct {
			f           *Fork
			origin, now forkModel
		}
		clone := forkModel.clone
		root := forkModel{pods: maps.Clone(w.pods), removed: map[string]bool{}, disrupted: map[types.NamespacedName]bool{}}
		stack := []*level{{f: snap.Fork(), origin: clone(root), now: clone(root)}}

		for step := range 60 {
			top := stack[len(stack)-1]
			keys := slices.SortedFunc(func(yield func(types.NamespacedName) bool) {
				for k := range w.pods {
					if !yield(k) {
						return
					}
				}
			}, func(a, b types.NamespacedName) int { return strings.Compare(a.Name, b.Name) })
			key := keys[rng.IntN(len(keys))]
			node := fmt.Sprintf("n%d", rng.IntN(w.nodes))
			switch op := rng.IntN(10); {
			case op == 0 && len(stack) < 4:
				stack = append(stack, &level{f: top.f.Fork(), origin: clone(top.now), now: clone(top.now)})
			case op == 1:
				top.f.Revert()
				top.now = clone(top.origin)
			case op == 2 && len(stack) > 1:
				stack = stack[:len(stack)-1]
			case op == 3 && rng.IntN(3) == 0:
				err := top.f.RemoveNode(node)
				if top.now.removed[node] != (err != nil) {
					t.Fatalf("seed %d step %d: RemoveNode(%s) = %v with the node removed=%v", seed, step, node, err, top.now.removed[node])
				}
				if err == nil {
					top.now.removed[node] = true
					for k, p := range top.now.pods {
						if p.Spec.NodeName == node && !store.IsTerminal(p) {
							top.now.remove(k, w)
						}
					}
				}
			case op < 7:
				_, held := top.now.pods[key]
				if err := top.f.RemovePod(key); (err == nil) != held {
					t.Fatalf("seed %d step %d: RemovePod(%s) = %v, model holds it: %v", seed, step, key, err, held)
				}
				if held {
					top.now.remove(key, w)
				}
			default:
				cur, held := top.now.pods[key]
				ok := (!held || cur.Spec.NodeName == "") && !top.now.removed[node]
				if err := top.f.AddPod(w.pods[key], node); (err == nil) != ok {
					t.Fatalf("seed %d step %d: AddPod(%s, %s) = %v, want success %v", seed, step, key, node, err, ok)
				}
				if ok {
					p := w.pods[key].DeepCopy()
					p.Spec.NodeName = node
					top.now.pods[key] = p
				}
			}
			top = stack[len(stack)-1]
			compareFork(t, fmt.Sprintf("seed %d step %d depth %d", seed, step, len(stack)), top.f, w, top.now.pods, top.now.removed, len(top.now.disrupted))
		}
	}
}

// forkModel is what a fork should hold: the pods where they are, the removed nodes, and
// the world's pods under the budget removed at least once.
type forkModel struct {
	pods      map[types.NamespacedName]*corev1.Pod
	removed   map[string]bool
	disrupted map[types.NamespacedName]bool
}

func (m forkModel) clone() forkModel {
	return forkModel{pods: maps.Clone(m.pods), removed: maps.Clone(m.removed), disrupted: maps.Clone(m.disrupted)}
}

// remove takes key out of the model; a pod of the world under the budget counts as
// disrupted when the eviction API would count it (Running or Unknown, not being deleted).
func (m forkModel) remove(key types.NamespacedName, w forkWorld) {
	delete(m.pods, key)
	p := w.pods[key]
	if phase := p.Status.Phase; p.Labels["app"] == "web" && p.DeletionTimestamp == nil &&
		(phase == corev1.PodRunning || phase == corev1.PodUnknown || phase == "") {
		m.disrupted[key] = true
	}
}

// compareFork checks every answer of f against a fresh cache holding pods without the
// removed nodes.
func compareFork(t *testing.T, what string, f *Fork, w forkWorld, pods map[types.NamespacedName]*corev1.Pod, removed map[string]bool, disrupted int) {
	t.Helper()
	want := readerOf(w.cache(t, pods, removed))
	byName := func(infos []*store.NodeInfo) []string {
		var out []string
		for _, n := range infos {
			keys := make([]string, 0, len(n.Pods))
			for _, p := range n.Pods {
				keys = append(keys, p.Name)
			}
			slices.Sort(keys)
			out = append(out, fmt.Sprintf("%s cpu=%d mem=%d pods=%d %v", n.Name, n.Requested.MilliCPU, n.Requested.Memory, n.Requested.Pods, keys))
		}
		slices.Sort(out)
		return out
	}
	if got, exp := byName(f.NodeInfos()), byName(want.NodeInfos()); !slices.Equal(got, exp) {
		t.Fatalf("%s: NodeInfos\n got %v\nwant %v", what, got, exp)
	}
	for i := range w.nodes {
		name := fmt.Sprintf("n%d", i)
		got, gok := f.NodeInfo(name)
		exp, eok := want.NodeInfo(name)
		if gok != eok || gok && !slices.Equal(byName([]*store.NodeInfo{got}), byName([]*store.NodeInfo{exp})) {
			t.Fatalf("%s: NodeInfo(%s) = %v, want %v", what, name, byName([]*store.NodeInfo{got}), byName([]*store.NodeInfo{exp}))
		}
		podNames := func(ps []store.PodStatus) []string {
			var out []string
			for _, p := range ps {
				out = append(out, p.Pod.Name+"@"+p.Pod.Spec.NodeName)
			}
			slices.Sort(out)
			return out
		}
		if g, e := podNames(f.PodsOnNode(name)), podNames(want.PodsOnNode(name)); !slices.Equal(g, e) {
			t.Fatalf("%s: PodsOnNode(%s) = %v, want %v", what, name, g, e)
		}
	}
	gang := types.NamespacedName{Namespace: "ns", Name: "gang"}
	g, _ := f.PodGroup(gang)
	e, _ := want.PodGroup(gang)
	slices.SortFunc(g.Members, func(a, b types.NamespacedName) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(e.Members, func(a, b types.NamespacedName) int { return strings.Compare(a.Name, b.Name) })
	if g.Counts != e.Counts || !slices.Equal(g.Members, e.Members) || g.MinMemberReached != e.MinMemberReached {
		t.Fatalf("%s: PodGroup = %+v %v %v, want %+v %v %v", what, g.Counts, g.Members, g.MinMemberReached, e.Counts, e.Members, e.MinMemberReached)
	}
	probe := ts.MakePod("ns", "probe", ts.WithLabels("app", "web"))
	if pdbs := f.PDBsForPod(probe); len(pdbs) != 1 || pdbs[0].AllowedDisruptions != 2-int32(disrupted) {
		t.Fatalf("%s: PDBsForPod = %+v, want the budget allowing %d", what, pdbs, 2-disrupted)
	}
}

// A fork reused through Revert allocates nothing to drop its changes, and a NodeInfo it
// returned keeps answering as it did when returned, through later moves and a Revert.
func TestFork_RevertAllocatesNothingAndKeepsWhatItReturned(t *testing.T) {
	w := newForkWorld(rand.New(rand.NewPCG(9, 10)), 3, 12)
	snap := w.snapshot(t)
	key := types.NamespacedName{Namespace: "ns", Name: "p1"}
	pod := w.pods[key]
	to := map[string]string{"n0": "n1", "n1": "n2", "n2": "n0"}[pod.Spec.NodeName]
	f := snap.Fork()
	move := func() {
		if err := f.RemovePod(key); err != nil {
			t.Fatal(err)
		}
		if err := f.AddPod(pod, to); err != nil {
			t.Fatal(err)
		}
	}
	move()
	held, _ := f.NodeInfo(to)
	want := fmt.Sprint(held.Requested, len(held.Pods))
	f.Revert()
	move()
	var allocs uint64
	for range 10 {
		move()
		allocs -= mallocs()
		f.Revert()
		allocs += mallocs()
	}
	if allocs != 0 {
		t.Errorf("10 Reverts of a move allocate %d times, want none", allocs)
	}
	if got := fmt.Sprint(held.Requested, len(held.Pods)); got != want {
		t.Errorf("a NodeInfo the fork returned changed from %s to %s", want, got)
	}
	if now, _ := f.NodeInfo(to); now == held {
		t.Error("a reverted fork answers with the NodeInfo of the change it dropped")
	}
}

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}
