package stores

// PodGroupSources sets which PodGroup sources the PodGroupStore follows (default: every
// one). A pod is counted only into the groups of enabled sources.
func (b *CacheHandlerBuilder) PodGroupSources(sources ...PodGroupSource) *CacheHandlerBuilder {
	b.h.podGroupSources = map[PodGroupSource]bool{}
	for _, s := range sources {
		b.h.podGroupSources[s] = true
	}
	return b
}

// IsPodGroupSourceEnabled reports whether the PodGroupStore follows a source.
func (h *CacheHandler) IsPodGroupSourceEnabled(s PodGroupSource) bool {
	return h.podGroupSources == nil || h.podGroupSources[s]
}
