package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHandler returns a handler with every store enabled on a fake clock, logging to the
// test; configure tweaks the config.
func newHandler(t testing.TB, configure ...func(*stores.Config)) (*Handler, *clocktesting.FakeClock) {
	t.Helper()
	var log logr.Logger
	if tt, ok := t.(*testing.T); ok {
		log = testr.NewWithOptions(tt, testr.Options{Verbosity: 0})
	} else {
		log = logr.Discard()
	}
	return newHandlerWithLog(t, log, configure...)
}

// newQuietHandler is newHandler without logs, for tests that reject events by the thousand.
func newQuietHandler(t testing.TB, configure ...func(*stores.Config)) (*Handler, *clocktesting.FakeClock) {
	t.Helper()
	return newHandlerWithLog(t, logr.Discard(), configure...)
}

func newHandlerWithLog(t testing.TB, log logr.Logger, configure ...func(*stores.Config)) (*Handler, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(t0)
	c := stores.Config{Clock: clk, PodAssumedTTL: 30 * time.Second, ReservationTTL: time.Minute}
	for _, f := range configure {
		f(&c)
	}
	config, err := stores.NewCacheHandler(c)
	if err != nil {
		t.Fatal(err)
	}
	return New(config, log), clk
}

// must fails the test on a non-nil error.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkInvariants fails the test on any violated invariant.
// The check in parts must agree with the whole check (checkWhole) on a cache at
// rest, or it would hide violations (or take the long hold for nothing).
func checkInvariants(t testing.TB, h *Handler) {
	t.Helper()
	for _, err := range h.CheckInvariants() {
		t.Error("invariant:", err)
	}
	if parts, once := errorSet(h.checkInParts()), errorSet(h.checkWhole()); !slices.Equal(parts, once) {
		t.Errorf("the check in parts found %q, the whole check %q", parts, once)
	}
}

// errorSet is the sorted messages of errs.
func errorSet(errs []error) []string {
	msgs := make([]string, 0, len(errs))
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	slices.Sort(msgs)
	return msgs
}

// dumpJSON renders the whole cache, to compare states before and after.
func dumpJSON(t testing.TB, h *Handler) string {
	t.Helper()
	doc := dumpParts(t, h)
	delete(doc, "generation") // generations move on rejected events' neighbours only; compare content
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dumpParts is the document WriteDump writes, by its top-level keys.
func dumpParts(t testing.TB, h *Handler) map[string]json.RawMessage {
	t.Helper()
	var buf bytes.Buffer
	must(t, h.WriteDump(context.Background(), &buf, DumpCompact))
	var doc map[string]json.RawMessage
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	return doc
}

// dumpPart decodes the part key of the document WriteDump writes.
func dumpPart[T any](t testing.TB, h *Handler, key string) T {
	t.Helper()
	var v T
	must(t, json.Unmarshal(dumpParts(t, h)[key], &v))
	return v
}

// eventsTotal reads multicache_events_total{kind,op,result}.
func eventsTotal(t testing.TB, kind, op, result string) float64 {
	t.Helper()
	return counterValue(t, metrics.EventsTotal.WithLabelValues(kind, op, result))
}

// counterValue reads a counter's value.
func counterValue(t testing.TB, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
