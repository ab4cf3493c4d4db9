package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// TestGang_NoneBindsUntilRoomForMinMemberThenAll: a pod group of 4 with minMember 4 on a
// node with room for 3 members: three are placed and wait at Permit, none is bound. A node
// with room for the fourth appears: all four bind.
func TestGang_NoneBindsUntilRoomForMinMemberThenAll(t *testing.T) {
	ctx := context.Background()
	const ns, scenario = "gang", "gang"
	newNamespace(ctx, t, ns)
	addNode(ctx, t, "gang-1", scenario, "3")

	group := &v1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train"}, Spec: v1alpha1.PodGroupSpec{MinMember: 4}}
	if err := env.Client.Create(ctx, group); err != nil {
		t.Fatal(err)
	}
	members := map[string]string{v1alpha1.PodGroupLabel: "train"}
	for i := range 4 {
		createPod(ctx, t, ns, fmt.Sprintf("worker-%d", i), scenario, "1", members)
	}
	never(t, 8*time.Second, "no member binds while only 3 fit", func() (bool, string) {
		n, where := bound(podsOf(ctx, t, ns, members))
		return n > 0, where
	})

	addNode(ctx, t, "gang-2", scenario, "1")
	eventually(t, 60*time.Second, "all four members bound", func() (bool, string) {
		n, where := bound(podsOf(ctx, t, ns, members))
		return n == 4, where
	})
}
