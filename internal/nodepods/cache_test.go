package nodepods

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
