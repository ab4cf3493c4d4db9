package operator

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestPodFeed_HoldsEachPodOnce: the cache holds the informer's own pod object, not a copy
// of it (a copy per pod is 176 MB at 150,000 pods).
func TestPodFeed_HoldsEachPodOnce(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("once-node", "8", "16Gi")), withoutUID(ts.MakePod(ns, "once", ts.OnNode("once-node"))))
	inf, err := op.Manager.GetCache().GetInformer(ctx(), &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	store := inf.(interface{ GetStore() toolscache.Store }).GetStore()
	eventually(t, "the cache holds the informer's pod", func() (bool, string) {
		st, ok := op.Cache.PodState(types.NamespacedName{Namespace: ns, Name: "once"})
		item, exists, _ := store.GetByKey(ns + "/once")
		if !ok || !exists {
			return false, fmt.Sprintf("cached %v, in the informer %v", ok, exists)
		}
		return st.APIPod == item.(*corev1.Pod) && st.Pod == st.APIPod, "the cache holds a copy"
	})
}
