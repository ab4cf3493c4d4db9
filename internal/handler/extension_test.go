package handler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// teams is a store written as an out-of-tree one would be, against pkg/multicache/store only: the
// bound pods of each value of the "team" label. It records the pod state it saw during
// each add, to check that it runs before the PodStore.
type teams struct {
	h      store.Handle
	pods   map[types.NamespacedName]string
	teams  *store.Versioned[string, int]
	broken bool
	// statesSeen are the PodStore's states of the pods added, read during the add.
	statesSeen []string
}

func newTeams(h store.Handle) (store.Store, error) {
	return &teams{h: h, pods: map[types.NamespacedName]string{}, teams: store.NewVersioned[string, int](h.Generations())}, nil
}

// teamsFactory is newTeams as pkg/multicache registers it: the CacheHandler as a store.Handle.
func teamsFactory(h *stores.CacheHandler) (store.Store, error) {
	return newTeams(stores.PublicHandle(h))
}

func (s *teams) Name() store.Name { return "teams" }
func (s *teams) Len() int         { return len(s.pods) }

func (s *teams) AddPod(pod *corev1.Pod) {
	st, ok := s.h.GetPodState(store.PodKey(pod))
	s.statesSeen = append(s.statesSeen, fmt.Sprintf("%s:%v:%s", pod.Name, ok, st.State))
	team := pod.Labels["team"]
	if pod.Spec.NodeName == "" || team == "" || store.IsPlaceholder(pod) {
		return
	}
	s.pods[store.PodKey(pod)] = team
	n, _ := s.teams.Get(team)
	s.teams.Set(team, n+1)
}

func (s *teams) UpdatePod(oldPod, newPod *corev1.Pod) { s.DeletePod(oldPod); s.AddPod(newPod) }

func (s *teams) DeletePod(pod *corev1.Pod) {
	team, ok := s.pods[store.PodKey(pod)]
	if !ok {
		return
	}
	delete(s.pods, store.PodKey(pod))
	if n, _ := s.teams.Get(team); n > 1 {
		s.teams.Set(team, n-1)
	} else {
		s.teams.Delete(team)
	}
}

func (s *teams) Dump() any {
	out := map[string]int{}
	s.teams.Range(func(team string, n int) bool { out[team] = n; return true })
	return out
}

func (s *teams) CheckInvariants() []error {
	if s.broken {
		return []error{errors.New("broken on purpose")}
	}
	return nil
}

type teamsSnapshot struct {
	teams map[string]int
	// copied counts the entries copied, to see that an update copies only what changed.
	copied int
}

func (*teamsSnapshot) StoreName() store.Name { return "teams" }

func (s *teams) NewSnapshot(store.SnapshotOptions) store.Snapshot {
	return &teamsSnapshot{teams: map[string]int{}}
}

func (s *teams) UpdateSnapshot(snap store.Snapshot, since int64) {
	ts := snap.(*teamsSnapshot)
	store.Sync(s.teams, ts.teams, since, func(_ int, n int) int { ts.copied++; return n }, nil)
}

// newExtended builds a handler with the built-in stores plus teams, enabling enabled (all
// when none).
func newExtended(t *testing.T, enabled ...stores.Name) *handler.Handler {
	t.Helper()
	reg, err := handler.BuiltIn().With(handler.Registration{Name: "teams", New: teamsFactory})
	if err != nil {
		t.Fatal(err)
	}
	if enabled == nil {
		enabled = reg.Names()
	}
	config, err := stores.NewCacheHandler(stores.Config{KnownStores: reg.Names(), EnabledStores: enabled})
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler.NewFromRegistry(config, reg, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func teamPod(name, node, team string) *corev1.Pod {
	return ts.MakePod("ns", name, ts.OnNode(node), ts.WithLabels("team", team))
}

func TestRegistry_ACustomStoreGetsEventsSnapshotsDumpInvariantsAndMetrics(t *testing.T) {
	h := newExtended(t)
	if got := h.StoreNames(); !slices.Equal(got[len(got)-2:], []stores.Name{"teams", "pods"}) {
		t.Fatalf("stores %v: a registered store comes just before the PodStore", got)
	}
	must(t, h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(t, h.Add(teamPod("a1", "n1", "a")))
	must(t, h.Add(teamPod("b1", "n1", "b")))
	must(t, h.AssumePod(teamPod("a2", "n1", "a"))) // an assumption reaches it like an add

	snap := h.NewSnapshot(store.SnapshotOptions{})
	must(t, h.UpdateSnapshot(snap))
	part, ok := snap.Part("teams").(*teamsSnapshot)
	if !ok || !maps(part.teams, map[string]int{"a": 2, "b": 1}) {
		t.Fatalf("snapshot part %#v", snap.Part("teams"))
	}
	// Incremental: one team changes, one entry is copied.
	part.copied = 0
	must(t, h.Delete(teamPod("b1", "n1", "b")))
	must(t, h.UpdateSnapshot(snap))
	if !maps(part.teams, map[string]int{"a": 2}) || part.copied != 0 {
		t.Errorf("after a delete: %v, copied %d (a deletion copies nothing)", part.teams, part.copied)
	}
	must(t, h.Update(teamPod("a1", "n1", "a"), teamPod("a1", "n1", "c")))
	must(t, h.UpdateSnapshot(snap))
	if !maps(part.teams, map[string]int{"a": 1, "c": 1}) || part.copied != 2 {
		t.Errorf("after an update: %v, copied %d, want the 2 teams that changed", part.teams, part.copied)
	}

	var dump struct {
		Extensions map[string]map[string]int `json:"extensions"`
	}
	var raw bytes.Buffer
	must(t, h.WriteDump(context.Background(), &raw, handler.DumpCompact))
	must(t, json.Unmarshal(raw.Bytes(), &dump))
	if !maps(dump.Extensions["teams"], map[string]int{"a": 1, "c": 1}) {
		t.Errorf("dump: %s", raw.String())
	}

	if !h.ReadStore("teams", func(s store.Store) {
		if s.(*teams).Len() != 2 {
			t.Errorf("ReadStore: %d pods", s.Len())
		}
	}) {
		t.Error("ReadStore does not find the enabled store")
	}
	if errs := h.CheckInvariants(); len(errs) != 0 {
		t.Errorf("invariants: %v", errs)
	}
	h.ReadStore("teams", func(s store.Store) { s.(*teams).broken = true })
	if errs := h.CheckInvariants(); len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "teams: broken on purpose") {
		t.Errorf("invariants %v, want the store's violation named after it", errs)
	}

	reg := prometheus.NewPedanticRegistry()
	must(t, reg.Register(handler.NewCollector(h)))
	if got := storeObjects(t, reg, "teams"); got != 2 {
		t.Errorf("multicache_store_objects{store=teams} = %v, want 2", got)
	}
}

func TestRegistry_ACustomStoreRunsBeforeThePodStore(t *testing.T) {
	h := newExtended(t)
	must(t, h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(t, h.Add(teamPod("p", "n1", "a")))
	var seen []string
	h.ReadStore("teams", func(s store.Store) { seen = s.(*teams).statesSeen })
	if !slices.Equal(seen, []string{"p:false:"}) {
		t.Errorf("states seen during the add %v: the PodStore must not know the pod yet", seen)
	}
}

func TestRegistry_ADisabledCustomStoreIsNotBuilt(t *testing.T) {
	h := newExtended(t, stores.PodGroupStoreName)
	if slices.Contains(h.StoreNames(), "teams") {
		t.Errorf("stores %v", h.StoreNames())
	}
	must(t, h.Add(ts.MakeNode("n1", "4", "8Gi")))
	must(t, h.Add(teamPod("a1", "n1", "a")))
	snap := h.NewSnapshot(store.SnapshotOptions{})
	must(t, h.UpdateSnapshot(snap))
	var dump bytes.Buffer
	must(t, h.WriteDump(context.Background(), &dump, handler.DumpCompact))
	if snap.Part("teams") != nil || strings.Contains(dump.String(), `"extensions"`) || h.ReadStore("teams", func(store.Store) {}) {
		t.Error("a disabled store shows in a snapshot, the dump or ReadStore")
	}
}

func TestRegistry_BadRegistrationsAreErrorsNamingTheStore(t *testing.T) {
	if _, err := stores.NewCacheHandler(stores.Config{EnabledStores: []stores.Name{"teams"}}); err == nil ||
		!strings.Contains(err.Error(), `unknown store "teams"`) {
		t.Errorf("an unregistered store enabled: %v", err)
	}
	for name, tc := range map[string]struct {
		reg  handler.Registry
		want string
	}{
		"factory error": {mustWith(t, handler.Registration{Name: "teams", New: func(*stores.CacheHandler) (store.Store, error) {
			return nil, errors.New("no team label")
		}}), `building store "teams": no team label`},
		"nil store": {mustWith(t, handler.Registration{Name: "teams", New: func(*stores.CacheHandler) (store.Store, error) {
			return nil, nil
		}}), `building store "teams": the factory returned no store`},
		"name mismatch": {mustWith(t, handler.Registration{Name: "squads", New: teamsFactory}), `store registered as "squads" calls itself "teams"`},
		"no node store": {handler.BuiltIn()[1:], `built-in "nodes" store (required)`},
		"pods not last": {append(handler.BuiltIn(), handler.Registration{Name: "teams", New: teamsFactory}), `"pods" store must come last`},
	} {
		t.Run(name, func(t *testing.T) {
			config, err := stores.NewCacheHandler(stores.Config{KnownStores: tc.reg.Names(), EnabledStores: tc.reg.Names()})
			must(t, err)
			if _, err := handler.NewFromRegistry(config, tc.reg, logr.Discard()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to say %q", err, tc.want)
			}
		})
	}
}

func TestRegistry_BuiltInBuilds(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{})
	must(t, err)
	if _, err := handler.NewFromRegistry(config, handler.BuiltIn(), logr.Discard()); err != nil {
		t.Fatal(err)
	}
	if got := handler.BuiltIn().Names(); !slices.Equal(got, stores.FanOutOrder) {
		t.Errorf("built-in registry %v, want %v", got, stores.FanOutOrder)
	}
}

func mustWith(t *testing.T, regs ...handler.Registration) handler.Registry {
	t.Helper()
	r, err := handler.BuiltIn().With(regs...)
	must(t, err)
	return r
}

func storeObjects(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	must(t, err)
	for _, f := range families {
		if f.GetName() != "multicache_store_objects" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "store" && l.GetValue() == name {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

func maps(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
