// Package publicreader lets code of this repository that builds a cache handler without an
// API server (the benchmarks) read it through pkg/multicache's Reader, as a sibling does.
// pkg/multicache sets Of when it is imported; no product code calls it.
package publicreader

import "github.com/seed0f91f25e/multicache/internal/handler"

// Of returns the multicache.Reader of h (as any: this package cannot import pkg/multicache,
// which imports it).
var Of func(h *handler.Handler) any
