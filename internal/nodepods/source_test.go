package nodepods

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// storeEvent is one notification a sourceStore handed out.
type storeEvent struct {
	op, key, rv string
	initial     bool
	tombstone   bool
}

type storeRecorder struct{ events []storeEvent }

func (r *storeRecorder) OnAdd(obj any, initial bool) {
	p := obj.(*corev1.Pod)
	r.events = append(r.events, storeEvent{op: "add", key: p.Name, rv: p.ResourceVersion, initial: initial})
}

func (r *storeRecorder) OnUpdate(_, obj any) {
	p := obj.(*corev1.Pod)
	r.events = append(r.events, storeEvent{op: "update", key: p.Name, rv: p.ResourceVersion})
}

func (r *storeRecorder) OnDelete(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		p := t.Obj.(*corev1.Pod)
		r.events = append(r.events, storeEvent{op: "delete", key: p.Name, rv: p.ResourceVersion, tombstone: true})
		return
	}
	p := obj.(*corev1.Pod)
	r.events = append(r.events, storeEvent{op: "delete", key: p.Name, rv: p.ResourceVersion})
}

func (r *storeRecorder) take() []storeEvent {
	out := r.events
	r.events = nil
	return out
}

func pod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv,
		Annotations: map[string]string{"dropped": "by the transform"}}}
}

// A sourceStore hands out what an informer's handler would get: the first list as initial
// adds, a relist's known keys as updates and its missing keys as tombstones, watch events
// as adds, updates and deletes; every object transformed before it is stored and handed out.
func TestSourceStore_HandsOutWhatAnInformerWould(t *testing.T) {
	rec := &storeRecorder{}
	transformed := 0
	st := newSourceStore(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.Annotations = nil
			transformed++
		}
		return obj, nil
	}, rec)
	if st.synced.Load() {
		t.Fatal("synced before the first list")
	}
	step := func(what string, do func() error, want ...storeEvent) {
		t.Helper()
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := rec.take(); !slices.Equal(got, want) {
			t.Fatalf("%s: handed out %+v, want %+v", what, got, want)
		}
	}
	step("the first list", func() error { return st.Replace([]any{pod("a", "1"), pod("b", "1")}, "1") },
		storeEvent{op: "add", key: "a", rv: "1", initial: true}, storeEvent{op: "add", key: "b", rv: "1", initial: true})
	if !st.synced.Load() {
		t.Fatal("not synced after the first list")
	}
	step("a watch add", func() error { return st.Add(pod("c", "2")) }, storeEvent{op: "add", key: "c", rv: "2"})
	step("a watch update", func() error { return st.Update(pod("a", "3")) }, storeEvent{op: "update", key: "a", rv: "3"})
	step("a watch delete", func() error { return st.Delete(pod("b", "4")) }, storeEvent{op: "delete", key: "b", rv: "4"})
	step("a delete of an unknown key", func() error { return st.Delete(pod("b", "4")) })
	step("a relist", func() error { return st.Replace([]any{pod("a", "3"), pod("d", "5")}, "5") },
		storeEvent{op: "update", key: "a", rv: "3"}, storeEvent{op: "add", key: "d", rv: "5"},
		storeEvent{op: "delete", key: "c", rv: "2", tombstone: true})
	var held []string
	for _, obj := range st.items.List() {
		p := obj.(*corev1.Pod)
		if p.Annotations != nil {
			t.Errorf("%s stored untransformed", p.Name)
		}
		held = append(held, p.Name)
	}
	slices.Sort(held)
	if !slices.Equal(held, []string{"a", "d"}) {
		t.Errorf("holds %v, want [a d]", held)
	}
	if transformed != 8 {
		t.Errorf("transformed %d objects, want every one stored or deleted (8)", transformed)
	}
}
