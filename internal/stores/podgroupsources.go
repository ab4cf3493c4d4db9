package stores

import "github.com/seed0f91f25e/multicache/pkg/multicache/store"

// PodGroupSources sets which PodGroup sources the PodGroupStore follows (default: every
// one). A pod is counted only into the groups of enabled sources.
func (b *CacheHandlerBuilder) PodGroupSources(sources ...store.PodGroupSource) *CacheHandlerBuilder {
	b.h.podGroupSources = map[store.PodGroupSource]bool{}
	for _, s := range sources {
		b.h.podGroupSources[s] = true
	}
	return b
}

// IsPodGroupSourceEnabled reports whether the PodGroupStore follows a source.
func (h *CacheHandler) IsPodGroupSourceEnabled(s store.PodGroupSource) bool {
	return h.podGroupSources == nil || h.podGroupSources[s]
}
