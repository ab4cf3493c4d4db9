package nodepods

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A node entering the shard starts the watch of its pods, handed out as adds; a node leaving
// takes its pods away as deletes, which Vanished reports out of scope (the last pod seen),
// not deleted.
func TestSet_NodeJoiningAndLeavingTheShard(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-scope-a", "scope")
	makeNode(t, "np-scope-b", "")
	makePods(t, ns, "np-scope-a", "a1")
	makePods(t, ns, "np-scope-b", "b1", "b2")
	s := newShard(t, "scope")
	rec := &recorder{}
	if _, err := s.set.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	s.startSet()
	eventually(t, "the Set synced", func() (bool, string) { return s.set.HasSynced(), "not synced" })
	eventually(t, "node a's pod is handed out", equalKeys(func() []string { return rec.added(ns) }, keys(ns, "a1")))
	if s.set.Watches("np-scope-b") {
		t.Fatal("watches the pods of a node outside the shard")
	}

	label(t, "np-scope-b", "scope")
	eventually(t, "node b's pods are handed out as it joins", equalKeys(func() []string { return rec.added(ns) }, keys(ns, "a1", "b1", "b2")))
	eventually(t, "the Set holds node b's pods", equalKeys(func() []string { return heldIn(s.set, ns) }, keys(ns, "a1", "b1", "b2")))
	for _, e := range rec.addEvents() {
		if (e.key == ns+"/b1" || e.key == ns+"/b2") && e.initial {
			t.Errorf("%s of a node that joined after the Set synced handed as part of the initial list", e.key)
		}
	}
	if p, ok := s.set.Get(ns + "/b1"); !ok || p.Spec.NodeName != "np-scope-b" {
		t.Errorf("Get of a joined node's pod: %v, %v", p, ok)
	}

	label(t, "np-scope-b", "scope-elsewhere")
	eventually(t, "node b's pods are deleted as it leaves", equalKeys(func() []string { return rec.deleted(ns) }, keys(ns, "b1", "b2")))
	if got := heldIn(s.set, ns); !slices.Equal(got, keys(ns, "a1")) {
		t.Errorf("holds %v after node b left, want only a1", got)
	}
	if s.set.Watches("np-scope-b") || slices.Contains(s.set.Nodes(), "np-scope-b") {
		t.Error("still watches the pods of a node that left")
	}
	if _, ok := s.set.Get(ns + "/b1"); ok {
		t.Error("Get returns a pod of a node that left")
	}
	pod, retry, err := s.set.Vanished(context.Background(), env.Client, keyOf(ns, "b1"))
	if err != nil || retry || pod == nil || pod.Name != "b1" || pod.Spec.NodeName != "np-scope-b" {
		t.Errorf("Vanished(b1) after its node left = %v, retry %v, %v; want the last pod seen (out of scope), no retry", pod, retry, err)
	}
	// Read once: the feed applied it; a later notification of the key is another story.
	if pod, retry, err := s.set.Vanished(context.Background(), env.Client, keyOf(ns, "b1")); pod != nil || retry || err != nil {
		t.Errorf("Vanished(b1) read again = %v, retry %v, %v; want gone", pod, retry, err)
	}
	// The pod exists still: the node left the shard, nothing was deleted.
	if err := env.Client.Get(context.Background(), keyOf(ns, "b2"), &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}

	// Back in the shard: its pods come back, and are no longer out of scope.
	label(t, "np-scope-b", "scope")
	eventually(t, "node b's pods are held again", equalKeys(func() []string { return heldIn(s.set, ns) }, keys(ns, "a1", "b1", "b2")))
	if pod, retry, err := s.set.Vanished(context.Background(), env.Client, keyOf(ns, "b2")); pod != nil || !retry || err != nil {
		t.Errorf("Vanished(b2) held again = %v, retry %v, %v; want retry (the Set holds it)", pod, retry, err)
	}
}

// A pod being bound leaves the unbound watch before its node's watch reports it: in between
// Vanished asks to retry; bound to a node outside the shard, it is out of scope (the live pod);
// deleted, it is gone.
func TestSet_VanishedFollowsAPodBeingBound(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-bind-a", "bind")
	makeNode(t, "np-bind-other", "bind-other")
	makePods(t, ns, "", "to-here", "to-there", "deleted", "lagging")
	s := startedShard(t, "bind")
	eventually(t, "the Set holds the unbound pods", equalKeys(func() []string { return heldIn(s.set, ns) },
		keys(ns, "deleted", "lagging", "to-here", "to-there")))
	ctx := context.Background()

	// Bound to a shard node whose watch is slow: between the watches.
	s.gates.hold("np-bind-a")
	bind(t, ns, "to-here", "np-bind-a")
	eventually(t, "the unbound watch dropped the bound pod", dropped(s.set, ns+"/to-here"))
	pod, retry, err := s.set.Vanished(ctx, env.Client, keyOf(ns, "to-here"))
	if pod != nil || !retry || err != nil {
		t.Errorf("Vanished of a pod between the watches = %v, retry %v, %v; want retry", pod, retry, err)
	}
	// The live read failing: an error, and the pod is still between the watches.
	if _, _, err := s.set.Vanished(ctx, failingReader{}, keyOf(ns, "to-here")); err == nil {
		t.Error("Vanished with a failing read: no error")
	}
	s.gates.release("np-bind-a")
	eventually(t, "the node's watch reports the bound pod", func() (bool, string) {
		p, ok := s.set.Get(ns + "/to-here")
		return ok && p.Spec.NodeName == "np-bind-a", fmt.Sprintf("%v %v", p, ok)
	})
	if pod, retry, err := s.set.Vanished(ctx, env.Client, keyOf(ns, "to-here")); pod != nil || !retry || err != nil {
		t.Errorf("Vanished of a pod held again = %v, retry %v, %v; want retry", pod, retry, err)
	}

	// Bound to another shard's node: out of scope.
	bind(t, ns, "to-there", "np-bind-other")
	eventually(t, "the unbound watch dropped the pod bound elsewhere", dropped(s.set, ns+"/to-there"))
	pod, retry, err = s.set.Vanished(ctx, env.Client, keyOf(ns, "to-there"))
	if err != nil || retry || pod == nil || pod.Spec.NodeName != "np-bind-other" {
		t.Errorf("Vanished of a pod bound outside the shard = %v, retry %v, %v; want the live pod, no retry", pod, retry, err)
	}

	// Deleted: gone.
	del := &corev1.Pod{}
	del.Namespace, del.Name = ns, "deleted"
	if err := env.Client.Delete(ctx, del, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unbound watch dropped the deleted pod", dropped(s.set, ns+"/deleted"))
	if pod, retry, err := s.set.Vanished(ctx, env.Client, keyOf(ns, "deleted")); pod != nil || retry || err != nil {
		t.Errorf("Vanished of a deleted pod = %v, retry %v, %v; want gone", pod, retry, err)
	}
	if pod, retry, err := s.set.Vanished(ctx, env.Client, keyOf(ns, "never-was")); pod != nil || retry || err != nil {
		t.Errorf("Vanished of a key never seen = %v, retry %v, %v; want gone", pod, retry, err)
	}
}

// When the node's watch reports a bound pod before the unbound watch drops it, the Set
// counts it once, on its node, in every view: lists by node, the whole list, a new handler.
func TestSet_PodBoundWhileTheUnboundWatchLagsIsCountedOnce(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-lag-a", "lag")
	makePods(t, ns, "", "pod")
	s := startedShard(t, "lag")
	eventually(t, "the Set holds the pod", equalKeys(func() []string { return heldIn(s.set, ns) }, keys(ns, "pod")))

	s.gates.hold("")
	bind(t, ns, "pod", "np-lag-a")
	eventually(t, "the node's watch reports the bound pod", func() (bool, string) {
		p, ok := s.set.Get(ns + "/pod")
		return ok && p.Spec.NodeName == "np-lag-a", fmt.Sprintf("%v %v", p, ok)
	})
	if got := heldIn(s.set, ns); !slices.Equal(got, keys(ns, "pod")) {
		t.Errorf("List holds %v, want the pod once", got)
	}
	if got := namesIn(s.set.OnNode(""), ns); len(got) != 0 {
		t.Errorf("OnNode(\"\") lists %v, bound to np-lag-a", got)
	}
	if got := namesIn(s.set.OnNode("np-lag-a"), ns); !slices.Equal(got, []string{"pod"}) {
		t.Errorf("OnNode(np-lag-a) lists %v, want [pod]", got)
	}
	rec := &recorder{}
	if _, err := s.set.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	var handed []event
	for _, e := range rec.addEvents() {
		if e.key == ns+"/pod" {
			handed = append(handed, e)
		}
	}
	if len(handed) != 1 || handed[0].node != "np-lag-a" {
		t.Errorf("a new handler is handed %+v, want the bound pod once", handed)
	}

	s.gates.release("")
	eventually(t, "the unbound watch drops the pod", func() (bool, string) {
		return len(rec.deleted(ns)) == 1, fmt.Sprint(rec.deleted(ns))
	})
	// The delete of the unbound watch is not the pod's: the Set holds it on its node.
	if p, ok := s.set.Get(ns + "/pod"); !ok || p.Spec.NodeName != "np-lag-a" {
		t.Errorf("after the unbound watch dropped it: Get = %v, %v; want the bound pod", p, ok)
	}
	if pod, retry, err := s.set.Vanished(context.Background(), env.Client, keyOf(ns, "pod")); pod != nil || !retry || err != nil {
		t.Errorf("Vanished of a pod held on its node = %v, retry %v, %v; want retry", pod, retry, err)
	}
}

// dropped is a condition: the Set's index no longer holds key (the store of its source may
// drop it before the source's handler updates the index).
func dropped(s *Set, key string) func() (bool, string) {
	return func() (bool, string) {
		return !slices.Contains(s.GetStore().ListKeys(), key), "still held"
	}
}

func namesIn(pods []*corev1.Pod, ns string) []string {
	var out []string
	for _, p := range pods {
		if p.Namespace == ns {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// failingReader fails every read, as an API server that does not answer.
type failingReader struct{ client.Reader }

func (failingReader) Get(context.Context, types.NamespacedName, client.Object, ...client.GetOption) error {
	return errors.New("the API server does not answer")
}
