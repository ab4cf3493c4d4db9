package nodepods

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// A shard's pod reads support what its pods are indexed by (spec.nodeName) and say so
// clearly otherwise.
func TestCache_RefusesWhatAShardDoesNotIndex(t *testing.T) {
	nodes := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &corev1.Node{}, 0, toolscache.Indexers{})
	c := &Cache{Set: NewSet(nil, nodes, nil, nil, logr.Discard())}
	err := c.List(context.Background(), &corev1.PodList{}, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.phase", "Running")})
	if err == nil || !strings.Contains(err.Error(), "spec.nodeName only") {
		t.Errorf("listing pods by status.phase: %v, want an error naming spec.nodeName", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Pod{}, "spec.schedulerName", func(client.Object) []string { return nil }); err == nil ||
		!strings.Contains(err.Error(), "spec.schedulerName") {
		t.Errorf("indexing pods by spec.schedulerName: %v, want an error naming the field", err)
	}
	if err := c.IndexField(context.Background(), &corev1.Pod{}, "spec.nodeName", func(client.Object) []string { return nil }); err != nil {
		t.Errorf("indexing pods by spec.nodeName: %v, want nil (the Set answers it)", err)
	}
	list := &corev1.PodList{}
	if err := c.List(context.Background(), list, client.MatchingFields{"spec.nodeName": "n1"}); err != nil || len(list.Items) != 0 {
		t.Errorf("listing an unwatched node's pods: %d pods, %v; want none", len(list.Items), err)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "p"}, &corev1.Pod{}); err == nil {
		t.Error("getting a pod the shard does not hold: no error, want not found")
	}
	if err := c.Set.AddIndexers(toolscache.Indexers{"x": nil}); err == nil {
		t.Error("adding an indexer to the shard's pod informer: no error")
	}
	if c.Set.HasSynced() {
		t.Error("a Set that never started reports synced")
	}
}

// A shard's cache (NewCacheFunc over the real API server) reads pods from its Set: Get and
// List of pods, by node through the Set's index, transformed as the options say; other kinds
// are the manager's cache's, label-selected as configured.
func TestCache_ReadsPodsFromTheSet(t *testing.T) {
	ns := newNamespace(t)
	makeNode(t, "np-cache-a", "cache")
	makeNode(t, "np-cache-b", "cache")
	makeNode(t, "np-cache-other", "cache-other")
	for node, names := range map[string][]string{"np-cache-a": {"a-web", "a-db"}, "np-cache-b": {"b-web"}, "np-cache-other": {"other"}, "": {"pending"}} {
		for _, name := range names {
			pod := ts.MakePod(ns, name, ts.OnNode(node), ts.WithLabels("app", name[strings.LastIndex(name, "-")+1:]),
				ts.WithAnnotations("dropped-by-transform", "x"))
			pod.UID = ""
			if err := env.Client.Create(context.Background(), pod); err != nil {
				t.Fatal(err)
			}
		}
	}
	stripAnnotations := func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			p.Annotations = nil
		}
		return obj, nil
	}
	newCache := NewCacheFunc(logr.Discard(), nil)
	c, err := newCache(env.Config, cache.Options{Scheme: env.Scheme, ByObject: map[client.Object]cache.ByObject{
		&corev1.Node{}: {Label: labels.SelectorFromSet(labels.Set{shardKey: "cache"})},
		&corev1.Pod{}:  {Transform: stripAnnotations},
	}})
	if err != nil {
		t.Fatal(err)
	}
	shard, ok := c.(*Cache)
	if !ok {
		t.Fatalf("NewCacheFunc made a %T, want *Cache", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan error, 1)
	go func() { started <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-started; err != nil {
			t.Errorf("Cache.Start: %v", err)
		}
	})
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the shard's cache did not sync")
	}
	if !shard.Set.HasSynced() {
		t.Error("the cache synced before its Set")
	}

	if inf, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil || inf != cache.Informer(shard.Set) {
		t.Errorf("GetInformer(Pod) = %T, %v; want the Set", inf, err)
	}
	if inf, err := c.GetInformerForKind(ctx, corev1.SchemeGroupVersion.WithKind("Pod")); err != nil || inf != cache.Informer(shard.Set) {
		t.Errorf("GetInformerForKind(Pod) = %T, %v; want the Set", inf, err)
	}
	if inf, err := c.GetInformer(ctx, &corev1.Node{}); err != nil || inf == cache.Informer(shard.Set) {
		t.Errorf("GetInformer(Node) = %T, %v; want the manager cache's", inf, err)
	}

	pod := &corev1.Pod{}
	eventually(t, "the shard's pod is read from the Set", func() (bool, string) {
		err := c.Get(ctx, keyOf(ns, "a-web"), pod)
		return err == nil, fmt.Sprint(err)
	})
	if pod.Spec.NodeName != "np-cache-a" || pod.Annotations != nil {
		t.Errorf("Get(a-web) = node %q, annotations %v; want np-cache-a, transformed (none)", pod.Spec.NodeName, pod.Annotations)
	}
	if err := c.Get(ctx, keyOf(ns, "other"), &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get of another shard's pod: %v, want not found", err)
	}

	list := func(opts ...client.ListOption) []string {
		t.Helper()
		l := &corev1.PodList{}
		if err := c.List(ctx, l, append(opts, client.InNamespace(ns))...); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		return names
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"every pod of the shard", nil, []string{"a-db", "a-web", "b-web", "pending"}},
		{"by node", []client.ListOption{client.MatchingFields{nodeNameField: "np-cache-a"}}, []string{"a-db", "a-web"}},
		{"unbound", []client.ListOption{client.MatchingFields{nodeNameField: ""}}, []string{"pending"}},
		{"another shard's node", []client.ListOption{client.MatchingFields{nodeNameField: "np-cache-other"}}, nil},
		{"by node and label", []client.ListOption{client.MatchingFields{nodeNameField: "np-cache-a"}, client.MatchingLabels{"app": "web"}}, []string{"a-web"}},
		{"by label", []client.ListOption{client.MatchingLabels{"app": "web"}}, []string{"a-web", "b-web"}},
	} {
		if got := list(tc.opts...); !slices.Equal(got, tc.want) {
			t.Errorf("List %s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if l := (&corev1.PodList{}); c.List(ctx, l, client.InNamespace("np-no-such-namespace")) != nil || len(l.Items) != 0 {
		t.Errorf("List in another namespace: %d pods, want none", len(l.Items))
	}
	for _, sel := range []fields.Selector{
		fields.AndSelectors(fields.OneTermEqualSelector(nodeNameField, "np-cache-a"), fields.OneTermEqualSelector("metadata.name", "a-web")),
		fields.OneTermNotEqualSelector(nodeNameField, "np-cache-a"),
	} {
		err := c.List(ctx, &corev1.PodList{}, client.MatchingFieldsSelector{Selector: sel})
		if err == nil || !strings.Contains(err.Error(), "spec.nodeName only") || !strings.Contains(err.Error(), sel.String()) {
			t.Errorf("List of pods by %q: %v, want an error naming spec.nodeName and the selector", sel, err)
		}
	}

	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	var nodeNames []string
	for _, n := range nodes.Items {
		nodeNames = append(nodeNames, n.Name)
	}
	slices.Sort(nodeNames)
	if !slices.Equal(nodeNames, []string{"np-cache-a", "np-cache-b"}) {
		t.Errorf("the manager's cache lists nodes %v, want the shard's", nodeNames)
	}

	// The Set lives as long as the cache.
	if err := c.RemoveInformer(ctx, &corev1.Pod{}); err != nil {
		t.Errorf("RemoveInformer(Pod): %v", err)
	}
	if err := c.Get(ctx, keyOf(ns, "b-web"), &corev1.Pod{}); err != nil {
		t.Errorf("Get after RemoveInformer(Pod): %v", err)
	}
}
