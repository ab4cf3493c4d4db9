package testsupport

import (
	"context"
	"strings"
	"testing"
)

// TestEtcd_EditsTheStoreAndReportsItsErrors runs the gateway calls against the real etcd:
// a put moves the revision on, a delete counts what it deleted, and a compaction etcd
// refuses (a future revision) is an error naming the call.
func TestEtcd_EditsTheStoreAndReportsItsErrors(t *testing.T) {
	env, err := StartWith(StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, etcd := context.Background(), env.Etcd()

	first, err := etcd.Put(ctx, "/testsupport/a", "1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := etcd.Put(ctx, "/testsupport/a", "2")
	if err != nil || second != first+1 {
		t.Fatalf("second put: revision %d, %v; want %d", second, err, first+1)
	}
	for _, want := range []int64{1, 0} {
		if n, err := etcd.Delete(ctx, "/testsupport/a"); n != want || err != nil {
			t.Errorf("delete: %d, %v; want %d deleted", n, err, want)
		}
	}
	if err := etcd.Compact(ctx, second); err != nil {
		t.Errorf("compacting at %d: %v", second, err)
	}
	err = etcd.Compact(ctx, second+1000)
	if err == nil || !strings.Contains(err.Error(), "/v3/kv/compaction") {
		t.Errorf("compacting at a future revision: %v, want an error naming the call", err)
	}
}
