package multicache_test

import (
	"testing"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestPodGroupKey_SourcesNeverCollideAndSplitBack: a group "train" in one namespace may exist
// in every API; each source's key is its own and splits back into source and name.
func TestPodGroupKey_SourcesNeverCollideAndSplitBack(t *testing.T) {
	seen := map[string]store.PodGroupSource{}
	for _, src := range []store.PodGroupSource{store.PodGroupSourceMulticache, store.PodGroupSourceNative,
		store.PodGroupSourceSchedulerPlugins} {
		key := multicache.PodGroupKey(src, "team-a", "train")
		if other, dup := seen[key.String()]; dup {
			t.Errorf("%s and %s share the key %s", src, other, key)
		}
		seen[key.String()] = src
		if gotSrc, name := multicache.PodGroupSourceOf(key); gotSrc != src || name != "train" || key.Namespace != "team-a" {
			t.Errorf("%s: key %s splits into %s %q", src, key, gotSrc, name)
		}
	}
}
