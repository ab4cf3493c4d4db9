package bench

import "github.com/seed0f91f25e/multicache/internal/stores"

// The variants every operation is measured for; Kube is the anchor of every ratio.
var (
	// Kube is kube-scheduler's cache.
	Kube = Variant{Name: "kube", New: NewKubeCache}
	// MCCore is multicache with only the required stores.
	MCCore = Variant{Name: "mc-core", New: func() Cache {
		return &multicache{h: NewMulticache(nil, stores.NodeStoreName, stores.PodStoreName)}
	}}
	// MCAll is multicache with all the built-in stores (the default).
	MCAll = Variant{Name: "mc-all", New: func() Cache { return &multicache{h: NewMulticache(nil)} }}

	// Variants lists them in table order.
	Variants = []Variant{Kube, MCCore, MCAll}
)
