package stores_test

import (
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestCacheHandlerBuilder_ReservationTTLSetsTheDefaultUnlessItIsSet: ReservationTTL (the
// deleted pods' hold) also sets ReservationDefaultTTL, the one setting both had before,
// unless that is set, before or after.
func TestCacheHandlerBuilder_ReservationTTLSetsTheDefaultUnlessItIsSet(t *testing.T) {
	for name, tc := range map[string]struct {
		b                *stores.CacheHandlerBuilder
		hold, defaultTTL time.Duration
	}{
		"defaults":      {stores.NewCacheHandlerBuilder(), 10 * time.Minute, 10 * time.Minute},
		"hold only":     {stores.NewCacheHandlerBuilder().ReservationTTL(time.Minute), time.Minute, time.Minute},
		"default after": {stores.NewCacheHandlerBuilder().ReservationTTL(time.Minute).ReservationDefaultTTL(time.Hour), time.Minute, time.Hour},
		"default first": {stores.NewCacheHandlerBuilder().ReservationDefaultTTL(time.Hour).ReservationTTL(time.Minute), time.Minute, time.Hour},
	} {
		h, err := tc.b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if h.ReservationTTL() != tc.hold || h.ReservationDefaultTTL() != tc.defaultTTL {
			t.Errorf("%s: hold %v default %v, want %v %v", name, h.ReservationTTL(), h.ReservationDefaultTTL(), tc.hold, tc.defaultTTL)
		}
	}
}

func TestCacheHandler_AccountingReachesStoresBuiltInAndOutOfTree(t *testing.T) {
	h, err := stores.NewCacheHandlerBuilder().Build()
	if err != nil {
		t.Fatal(err)
	}
	if h.Accounting() != (store.Accounting{}) {
		t.Errorf("default accounting %+v, want kube-scheduler's default gates (the zero value)", h.Accounting())
	}
	on := store.Accounting{DRANodeAllocatableResources: true}
	if h, err = stores.NewCacheHandlerBuilder().Accounting(on).Build(); err != nil {
		t.Fatal(err)
	}
	if h.Accounting() != on || stores.PublicHandle(h).Accounting() != on {
		t.Errorf("accounting %+v, public handle %+v; want %+v", h.Accounting(), stores.PublicHandle(h).Accounting(), on)
	}
}
