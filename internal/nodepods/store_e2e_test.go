package nodepods

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The Set's store is a view of its index: Get, GetByKey, List and ListKeys agree with each
// other and with what the Set holds; writes are refused (the sources' informers write).
func TestSet_StoreIsAReadOnlyViewOfTheIndex(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-store-a", "store")
	makeNode(t, "np-store-other", "store-other")
	makePods(t, ns, "np-store-a", "a1", "a2")
	makePods(t, ns, "np-store-other", "other")
	makePods(t, ns, "", "pending")
	s := startedShard(t, "store")
	want := keys(ns, "a1", "a2", "pending")
	eventually(t, "the Set holds the pods", equalKeys(func() []string { return heldIn(s.set, ns) }, want))

	st := s.set.GetStore()
	var listed, listedKeys []string
	for _, obj := range st.List() {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			t.Fatalf("the store lists a %T", obj)
		}
		if p.Namespace == ns {
			listed = append(listed, p.Namespace+"/"+p.Name)
		}
	}
	for _, k := range st.ListKeys() {
		if len(k) > len(ns) && k[:len(ns)+1] == ns+"/" {
			listedKeys = append(listedKeys, k)
		}
	}
	slices.Sort(listed)
	slices.Sort(listedKeys)
	if !slices.Equal(listed, want) || !slices.Equal(listedKeys, want) {
		t.Errorf("List %v, ListKeys %v; want %v", listed, listedKeys, want)
	}
	for _, key := range want {
		obj, ok, err := st.GetByKey(key)
		p, isPod := obj.(*corev1.Pod)
		if err != nil || !ok || !isPod || p.Namespace+"/"+p.Name != key {
			t.Errorf("GetByKey(%s) = %v, %v, %v", key, obj, ok, err)
			continue
		}
		if _, ok, err := st.Get(p); !ok || err != nil {
			t.Errorf("Get(%s) = %v, %v", key, ok, err)
		}
		if held, ok := s.set.Get(key); !ok || held != p {
			t.Errorf("the store and the Set hand out different objects for %s", key)
		}
	}
	if _, ok, err := st.GetByKey(ns + "/other"); ok || err != nil {
		t.Errorf("GetByKey of another shard's pod = %v, %v; want not found", ok, err)
	}
	if _, _, err := st.Get("not an object"); err == nil {
		t.Error("Get of an object without metadata: no error")
	}

	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = ns, "written"
	for name, write := range map[string]func() error{
		"Add":     func() error { return st.Add(pod) },
		"Update":  func() error { return st.Update(pod) },
		"Delete":  func() error { obj, _, _ := st.GetByKey(ns + "/a1"); return st.Delete(obj) },
		"Replace": func() error { return st.Replace([]any{pod}, "1") },
	} {
		if err := write(); err == nil {
			t.Errorf("store.%s: no error, want the store refusing writes", name)
		}
	}
	if got := heldIn(s.set, ns); !slices.Equal(got, want) {
		t.Errorf("after refused writes the Set holds %v, want %v", got, want)
	}
}
