package stores_test

import (
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var allSources = []store.PodGroupSource{store.PodGroupSourceMulticache, store.PodGroupSourceNative, store.PodGroupSourceSchedulerPlugins}

func newCacheHandler(t *testing.T, c stores.Config) *stores.CacheHandler {
	t.Helper()
	h, err := stores.NewCacheHandler(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestNewCacheHandler_ZeroConfigTakesTheDefaults(t *testing.T) {
	h := newCacheHandler(t, stores.Config{})
	if h.ComponentName() != "multicache" || h.SchedulerType() != "default-scheduler" || h.SubClusterKey() != "" || h.SubCluster() != "" {
		t.Errorf("component %q, scheduler %q, sub-cluster %q=%q", h.ComponentName(), h.SchedulerType(), h.SubClusterKey(), h.SubCluster())
	}
	if h.PodAssumedTTL() != 15*time.Minute || h.Period() != time.Second || h.ReservationTTL() != 10*time.Minute || h.ReservationDefaultTTL() != 10*time.Minute {
		t.Errorf("assumed TTL %v, period %v, reservation TTL %v, default TTL %v; want 15m, 1s, 10m, 10m",
			h.PodAssumedTTL(), h.Period(), h.ReservationTTL(), h.ReservationDefaultTTL())
	}
	for _, n := range stores.FanOutOrder {
		if !h.IsStoreEnabled(n) {
			t.Errorf("built-in store %s disabled by default", n)
		}
	}
	for _, s := range allSources {
		if !h.IsPodGroupSourceEnabled(s) {
			t.Errorf("pod group source %s disabled by default", s)
		}
	}
	if _, real := h.Clock().(clock.RealClock); !real {
		t.Errorf("clock %T, want the real clock", h.Clock())
	}
	if h.PodReader() != nil || h.Accounting() != (store.Accounting{}) || h.Mutex() == nil || h.Generations() == nil {
		t.Errorf("pod reader %v, accounting %+v, mutex %p, generations %p", h.PodReader(), h.Accounting(), h.Mutex(), h.Generations())
	}
	select {
	case <-h.StopCh():
		t.Error("the default StopCh is closed")
	default:
	}
}

func TestNewCacheHandler_SetFieldsAreKeptAndZeroOnesDefault(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	pods := fake.NewClientBuilder().Build()
	h := newCacheHandler(t, stores.Config{
		ComponentName: "c", SchedulerType: "s", SubClusterKey: "zone", SubCluster: "a",
		EnabledStores: []stores.Name{stores.PDBStoreName}, PodAssumedTTL: time.Minute,
		PodReader: pods, Clock: clk, PodGroupSources: []store.PodGroupSource{store.PodGroupSourceNative},
	})
	if h.ComponentName() != "c" || h.SchedulerType() != "s" || h.SubClusterKey() != "zone" || h.SubCluster() != "a" ||
		h.PodAssumedTTL() != time.Minute || h.PodReader() != pods || h.Clock() != clk {
		t.Errorf("a set field was not kept: %q %q %q=%q %v %v %v", h.ComponentName(), h.SchedulerType(), h.SubClusterKey(), h.SubCluster(),
			h.PodAssumedTTL(), h.PodReader(), h.Clock())
	}
	if h.Period() != time.Second || h.ReservationTTL() != 10*time.Minute {
		t.Errorf("period %v, reservation TTL %v; want the defaults 1s and 10m", h.Period(), h.ReservationTTL())
	}
	for _, n := range stores.FanOutOrder {
		if want := stores.Required(n) || n == stores.PDBStoreName; h.IsStoreEnabled(n) != want {
			t.Errorf("store %s enabled %v, want %v", n, h.IsStoreEnabled(n), want)
		}
	}
	for _, s := range allSources {
		if want := s == store.PodGroupSourceNative; h.IsPodGroupSourceEnabled(s) != want {
			t.Errorf("pod group source %s enabled %v, want %v", s, h.IsPodGroupSourceEnabled(s), want)
		}
	}
}

// TestNewCacheHandler_EmptyListsEnableNothing: nil takes the default (every one), an empty
// list is a choice of none (the required stores are built all the same).
func TestNewCacheHandler_EmptyListsEnableNothing(t *testing.T) {
	h := newCacheHandler(t, stores.Config{EnabledStores: []stores.Name{}, PodGroupSources: []store.PodGroupSource{}})
	for _, n := range stores.FanOutOrder {
		if h.IsStoreEnabled(n) != stores.Required(n) {
			t.Errorf("store %s enabled %v with an empty EnabledStores", n, h.IsStoreEnabled(n))
		}
	}
	for _, s := range allSources {
		if h.IsPodGroupSourceEnabled(s) {
			t.Errorf("pod group source %s enabled with an empty PodGroupSources", s)
		}
	}
}

// TestNewCacheHandler_ReservationDefaultTTLIsReservationTTLUnlessSet: ReservationTTL (the
// deleted pods' hold) alone sets ReservationDefaultTTL too, the one setting both had before.
func TestNewCacheHandler_ReservationDefaultTTLIsReservationTTLUnlessSet(t *testing.T) {
	for name, tc := range map[string]struct {
		c                stores.Config
		hold, defaultTTL time.Duration
	}{
		"defaults":     {stores.Config{}, 10 * time.Minute, 10 * time.Minute},
		"hold only":    {stores.Config{ReservationTTL: time.Minute}, time.Minute, time.Minute},
		"both":         {stores.Config{ReservationTTL: time.Minute, ReservationDefaultTTL: time.Hour}, time.Minute, time.Hour},
		"default only": {stores.Config{ReservationDefaultTTL: time.Hour}, 10 * time.Minute, time.Hour},
	} {
		h := newCacheHandler(t, tc.c)
		if h.ReservationTTL() != tc.hold || h.ReservationDefaultTTL() != tc.defaultTTL {
			t.Errorf("%s: hold %v default %v, want %v %v", name, h.ReservationTTL(), h.ReservationDefaultTTL(), tc.hold, tc.defaultTTL)
		}
	}
}

func TestNewCacheHandler_BadConfigurationIsAnErrorNamingIt(t *testing.T) {
	for name, tc := range map[string]struct {
		c    stores.Config
		want string
	}{
		"unknown store": {stores.Config{EnabledStores: []stores.Name{"quotas"}},
			`unknown store "quotas" (known: [nodes podgroups pdbs movements reservations devices pods])`},
		"unknown to KnownStores": {stores.Config{KnownStores: []stores.Name{"nodes", "pods"}, EnabledStores: []stores.Name{"pdbs"}},
			`unknown store "pdbs" (known: [nodes pods])`},
		"negative assumed TTL": {stores.Config{PodAssumedTTL: -time.Second}, "pod assumed TTL must not be negative (0 takes the default), got -1s"},
		"negative period":      {stores.Config{Period: -time.Second}, "period must not be negative (0 takes the default), got -1s"},
		"negative hold":        {stores.Config{ReservationTTL: -time.Minute}, "reservation TTL must not be negative (0 takes the default), got -1m0s"},
		"negative default TTL": {stores.Config{ReservationDefaultTTL: -time.Minute}, "reservation default TTL must not be negative (0 takes the default), got -1m0s"},
		"key without value":    {stores.Config{SubClusterKey: "shard"}, "a sub-cluster needs both a label key and a value"},
		"value without key":    {stores.Config{SubCluster: "a"}, "a sub-cluster needs both a label key and a value"},
		"every error at once": {stores.Config{Period: -time.Second, SubCluster: "a", EnabledStores: []stores.Name{"quotas"}},
			"period must not be negative (0 takes the default), got -1s\n" +
				"a sub-cluster needs both a label key and a value\n" +
				`unknown store "quotas" (known: [nodes podgroups pdbs movements reservations devices pods])`},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := stores.NewCacheHandler(tc.c)
			if err == nil || err.Error() != tc.want || h != nil {
				t.Errorf("handler %v, error %v; want none and\n%s", h, err, tc.want)
			}
		})
	}
}

func TestCacheHandler_AccountingReachesStoresBuiltInAndOutOfTree(t *testing.T) {
	on := store.Accounting{DRANodeAllocatableResources: true}
	h := newCacheHandler(t, stores.Config{Accounting: on})
	if h.Accounting() != on || stores.PublicHandle(h).Accounting() != on {
		t.Errorf("accounting %+v, public handle %+v; want %+v", h.Accounting(), stores.PublicHandle(h).Accounting(), on)
	}
}

// TestNewCacheHandler_KeepsItsOwnLists: the caller's slices may change afterwards.
func TestNewCacheHandler_KeepsItsOwnLists(t *testing.T) {
	enabled := []stores.Name{stores.PDBStoreName}
	sources := []store.PodGroupSource{store.PodGroupSourceNative}
	h := newCacheHandler(t, stores.Config{EnabledStores: enabled, PodGroupSources: sources})
	enabled[0], sources[0] = stores.MovementStoreName, store.PodGroupSourceMulticache
	if !h.IsStoreEnabled(stores.PDBStoreName) || h.IsStoreEnabled(stores.MovementStoreName) ||
		!h.IsPodGroupSourceEnabled(store.PodGroupSourceNative) || h.IsPodGroupSourceEnabled(store.PodGroupSourceMulticache) {
		t.Error("the handler follows the caller's slices")
	}
}
