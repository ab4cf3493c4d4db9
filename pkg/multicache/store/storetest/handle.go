// Package storetest builds the store.Handle a store's unit test calls its factory with, as
// kube-scheduler's framework/runtime builds a Handle for a plug-in's tests.
package storetest

import (
	"k8s.io/utils/clock"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Option changes the handle NewHandle builds.
type Option func(*options)

type options struct{ clock clock.WithTicker }

// WithClock sets the handle's clock (a k8s.io/utils/clock/testing fake, typically).
func WithClock(c clock.WithTicker) Option {
	return func(o *options) { o.clock = c }
}

// NewHandle returns a handle with multicache's defaults (every built-in store enabled, the
// flags' default durations, the real clock) and no other store: GetNodeInfo and
// GetPodState answer nothing, as before the first event.
func NewHandle(opts ...Option) store.Handle {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	h, err := stores.NewCacheHandler(stores.Config{Clock: o.clock})
	if err != nil {
		panic("storetest: multicache's defaults do not build: " + err.Error()) // they are valid
	}
	return stores.PublicHandle(h)
}
