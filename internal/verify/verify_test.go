package verify

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// fakeCache holds pod versions and the violations CheckInvariants reports.
type fakeCache struct {
	mu         sync.Mutex
	pods       map[string]string
	violations []error
}

func (c *fakeCache) WatchedKinds() []stores.Kind { return []stores.Kind{stores.KindPod} }

func (c *fakeCache) LastSeenVersions(kind stores.Kind) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	if kind == stores.KindPod {
		for k, v := range c.pods {
			out[k] = v
		}
	}
	return out
}

func (c *fakeCache) CheckInvariants() []error { return c.violations }

// fakeSource lists pods.
type fakeSource struct {
	pods map[string]string
}

func (s *fakeSource) Each(_ context.Context, l drift.Listing, fn func(client.Object) error) error {
	if l.Kind != stores.KindPod {
		return nil
	}
	for key, rv := range s.pods {
		ns, name, _ := cutKey(key)
		if err := fn(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeSource) Get(_ context.Context, l drift.Listing, key client.ObjectKey) (client.Object, bool, error) {
	rv, ok := s.pods[key.Namespace+"/"+key.Name]
	if l.Kind != stores.KindPod || !ok {
		return nil, false, nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: rv}}, true, nil
}

func cutKey(key string) (string, string, bool) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return "", key, false
}

func driftCount(t *testing.T) float64 {
	t.Helper()
	var m dto.Metric
	if err := metrics.DriftTotal.WithLabelValues(string(stores.KindPod)).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestRun_TransientDifferencesAreNotDriftPersistentOnesAreCountedOnceAndRefedEveryRun(t *testing.T) {
	cache := &fakeCache{pods: map[string]string{"ns/ok": "1", "ns/moving": "1", "ns/gone": "3"}}
	src := &fakeSource{pods: map[string]string{"ns/ok": "1", "ns/moving": "2", "ns/lost": "5"}}
	var refed []string
	var logs []string
	l := &Loop{
		Cache: cache, Source: src,
		Refeed: func(_ context.Context, kind stores.Kind, key string) error {
			refed = append(refed, string(kind)+" "+key)
			return nil
		},
		Log: funcr.New(func(prefix, args string) { logs = append(logs, args) }, funcr.Options{}),
	}
	before := driftCount(t)
	res, err := l.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Drift) != 0 || res.Suspects != 3 || len(refed) != 0 {
		t.Fatalf("a first sighting is drift: %+v, re-fed %v", res, refed)
	}
	// The event of ns/moving arrives before the next run: it was not drift.
	cache.mu.Lock()
	cache.pods["ns/moving"] = "2"
	cache.mu.Unlock()
	if res, err = l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []drift.Difference{
		{Kind: stores.KindPod, Key: "ns/gone", Problem: drift.NotInCluster, CacheVersion: "3"},
		{Kind: stores.KindPod, Key: "ns/lost", Problem: drift.MissingFromCache, APIVersion: "5"},
	}
	if len(res.Drift) != len(want) || res.Drift[0] != want[0] || res.Drift[1] != want[1] {
		t.Fatalf("drift %+v, want %+v", res.Drift, want)
	}
	if got := driftCount(t) - before; got != 2 {
		t.Errorf("drift counted %v, want 2", got)
	}
	if len(refed) != 2 || refed[0] != "Pod ns/gone" || refed[1] != "Pod ns/lost" {
		t.Errorf("re-fed %v", refed)
	}

	// The same drift on the next run is re-fed again but not counted or logged again.
	refed, logs = nil, nil
	if _, err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := driftCount(t) - before; got != 2 {
		t.Errorf("after a third run drift counted %v, want still 2", got)
	}
	if len(refed) != 2 {
		t.Errorf("third run re-fed %v, want both again", refed)
	}
	if len(logs) != 0 {
		t.Errorf("third run logged %v", logs)
	}
}

func TestRun_ViolationsAreLoggedOnceAndRefeedErrorsReturned(t *testing.T) {
	cache := &fakeCache{pods: map[string]string{}, violations: []error{errors.New("pod ns/a is not charged to node n")}}
	src := &fakeSource{pods: map[string]string{"ns/lost": "1"}}
	var logs []string
	l := &Loop{
		Cache: cache, Source: src,
		Refeed: func(context.Context, stores.Kind, string) error { return errors.New("feed stopped") },
		Log:    funcr.New(func(_, args string) { logs = append(logs, args) }, funcr.Options{}),
	}
	if _, err := l.Run(context.Background()); err != nil {
		t.Fatalf("a first sighting is not re-fed, yet: %v", err)
	}
	res, err := l.Run(context.Background())
	if err == nil {
		t.Error("a failed re-feed was not reported")
	}
	if len(res.Violations) != 1 {
		t.Errorf("violations %v", res.Violations)
	}
	n := len(logs)
	if _, err := l.Run(context.Background()); err == nil {
		t.Error("a failed re-feed was not reported on the second run")
	}
	if len(logs) != n {
		t.Errorf("the second run logged again: %v", logs[n:])
	}
}
