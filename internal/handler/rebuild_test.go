package handler_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// tally is a store that keeps a total of the pods it holds as events change it, and whose
// self-check compares it with a count; its total can be thrown off on purpose.
type tally struct {
	h          *stores.CacheHandler
	pods       map[string]bool
	kept       int
	miscounted bool
	// rebuilds counts RebuildTotals' corrections; underWriteLock whether each ran with the
	// handler's write lock held.
	rebuilds       int
	underWriteLock []bool
}

func (s *tally) Name() store.Name { return "tally" }
func (s *tally) Len() int         { return len(s.pods) }
func (s *tally) Dump() any        { return s.kept }
func (s *tally) AddPod(p *corev1.Pod) {
	s.pods[p.Name] = true
	s.kept++
}
func (s *tally) UpdatePod(_, _ *corev1.Pod) {}
func (s *tally) DeletePod(p *corev1.Pod) {
	delete(s.pods, p.Name)
	s.kept--
}
func (s *tally) NewSnapshot(store.SnapshotOptions) store.Snapshot { return nil }
func (s *tally) UpdateSnapshot(store.Snapshot, int64)             {}

func (s *tally) CheckInvariants() []error {
	s.miscounted = s.kept != len(s.pods)
	if s.miscounted {
		return []error{fmt.Errorf("kept %d pods, holds %d", s.kept, len(s.pods))}
	}
	return nil
}

func (s *tally) RebuildTotals() []string {
	locked := !s.h.Mutex().TryRLock()
	if !locked {
		s.h.Mutex().RUnlock()
	}
	s.underWriteLock = append(s.underWriteLock, locked)
	if !s.miscounted {
		return nil
	}
	s.rebuilds++
	fixed := fmt.Sprintf("pods: %d, rebuilt %d", s.kept, len(s.pods))
	s.kept, s.miscounted = len(s.pods), false
	return []string{fixed}
}

func rebuiltTotal(t *testing.T, name string) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.KeptTotalsRebuiltTotal.WithLabelValues(name).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestCheckInvariants_AConfirmedMiscountOfKeptTotalsIsRebuiltAndCounted: when the check's
// recheck confirms violations, a store that keeps totals and found them wrong rebuilds them
// under the handler's write lock; the rebuild is counted in
// multicache_kept_totals_rebuilt_total{store} and logged with what it corrected, and the
// next check finds nothing. A store whose totals are right is asked, and corrects nothing.
func TestCheckInvariants_AConfirmedMiscountOfKeptTotalsIsRebuiltAndCounted(t *testing.T) {
	var st *tally
	reg, err := handler.BuiltIn().With(handler.Registration{Name: "tally", New: func(h *stores.CacheHandler) (store.Store, error) {
		st = &tally{h: h, pods: map[string]bool{}}
		return st, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	config, err := stores.NewCacheHandler(stores.Config{KnownStores: reg.Names(), EnabledStores: reg.Names()})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	h, err := handler.NewFromRegistry(config, reg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Add(ts.MakeNode("n1", "8", "32Gi")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := h.Add(ts.MakePod("ns", fmt.Sprint("p", i), ts.OnNode("n1"))); err != nil {
			t.Fatal(err)
		}
	}
	if errs := h.CheckInvariants(); len(errs) != 0 {
		t.Fatalf("a sound cache: %v", errs)
	}
	if st.rebuilds != 0 || len(st.underWriteLock) != 0 {
		t.Fatalf("a check that found nothing asked for a rebuild")
	}

	before := rebuiltTotal(t, "tally")
	h.ReadStore("tally", func(store.Store) { st.kept += 2 })
	errs := h.CheckInvariants()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "tally: kept 5 pods, holds 3") {
		t.Fatalf("the miscount: %v, want it reported", errs)
	}
	if st.rebuilds != 1 || !slices.Equal(st.underWriteLock, []bool{true}) {
		t.Fatalf("rebuilds %d, under the write lock %v; want one, under it", st.rebuilds, st.underWriteLock)
	}
	if d := rebuiltTotal(t, "tally") - before; d != 1 {
		t.Errorf("multicache_kept_totals_rebuilt_total{store=tally} grew by %v, want 1", d)
	}
	if !slices.ContainsFunc(logged, func(l string) bool {
		return strings.Contains(l, `"store"="tally"`) && strings.Contains(l, "pods: 5, rebuilt 3")
	}) {
		t.Errorf("no log line names the store and the correction: %q", logged)
	}
	if errs := h.CheckInvariants(); len(errs) != 0 {
		t.Errorf("after the rebuild: %v, want nothing", errs)
	}
	if d := rebuiltTotal(t, "tally") - before; d != 1 {
		t.Errorf("multicache_kept_totals_rebuilt_total{store=tally} grew by %v after a sound check, want 1 in all", d)
	}
}
