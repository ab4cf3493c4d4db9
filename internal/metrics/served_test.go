package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// costly is a collector whose families Served cannot name; it counts its gathers.
type costly struct {
	desc     *prometheus.Desc
	gathered int
}

func newCostly() *costly {
	return &costly{desc: prometheus.NewDesc("other_costly", "A collector of another library.", nil, nil)}
}

func (c *costly) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *costly) Collect(ch chan<- prometheus.Metric) {
	c.gathered++
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 7)
}

// named is a collector that names its families.
type named struct{ *costly }

func (n named) MetricNames() []string { return []string{"other_costly"} }

// served builds what the operator builds: a Served over a registry that also holds a
// collector of another library, served by the registry's promhttp handler.
func served(t *testing.T) (*Served, *prometheus.Registry, *costly, http.Handler) {
	t.Helper()
	reg := prometheus.NewRegistry()
	other := newCostly()
	reg.MustRegister(other)
	s := NewServed(reg)
	events := counterVec(prometheus.CounterOpts{Namespace: "test", Name: "events_total", Help: "Events."}, []string{"kind"})
	caughtUp := gauge(prometheus.GaugeOpts{Namespace: "test", Name: "caught_up", Help: "Caught up."})
	s.MustRegister(events, caughtUp)
	events.WithLabelValues("Pod").Add(3)
	caughtUp.Set(1)
	full := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	return s, reg, other, s.Handler(full)
}

func read(t *testing.T, h http.Handler, url string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestServed_AReadNamingIndexedFamiliesGathersOnlyTheirCollectors: a read of /metrics whose
// name[] all name families Served indexed answers what the whole registry answers for it,
// without gathering the other collectors; a read naming another family, or none, gathers
// the whole registry.
func TestServed_AReadNamingIndexedFamiliesGathersOnlyTheirCollectors(t *testing.T) {
	s, reg, other, h := served(t)
	full := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})

	for _, url := range []string{
		"/metrics?name[]=test_events_total",
		"/metrics?name[]=test_events_total&name[]=test_caught_up",
		"/metrics?name[]=test_caught_up&name[]=test_never_registered_by_anyone",
	} {
		before := other.gathered
		got := read(t, h, url)
		indexed := !strings.Contains(url, "never_registered")
		if gathered := other.gathered > before; gathered == indexed {
			t.Errorf("GET %s gathered the other collector: %v, want %v", url, gathered, !indexed)
		}
		if want := read(t, full, url); got != want {
			t.Errorf("GET %s answered\n%s\nwant (the whole registry's, filtered)\n%s", url, got, want)
		}
	}
	if got := read(t, h, "/metrics?name[]=test_events_total"); !strings.Contains(got, `test_events_total{kind="Pod"} 3`) {
		t.Errorf("the filtered read misses the counter:\n%s", got)
	}

	before := other.gathered
	if got := read(t, h, "/metrics"); !strings.Contains(got, "other_costly 7") || !strings.Contains(got, "test_caught_up 1") {
		t.Errorf("a read naming nothing answered\n%s\nwant every family", got)
	}
	if other.gathered == before {
		t.Error("a read naming nothing did not gather the other collector")
	}

	// Another path is not the registry's: left to it.
	before = other.gathered
	rec := httptest.NewRecorder()
	s.Handler(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug?name[]=test_events_total", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("a read of another path answered %d, want the next handler's 404", rec.Code)
	}
}

// TestServed_NamedCollectorsAndUnregister: a collector that names its families is indexed
// like the package's metrics; once unregistered, a read naming its family is the registry's
// (which no longer has it either).
func TestServed_NamedCollectorsAndUnregister(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := NewServed(reg)
	c := named{newCostly()}
	s.MustRegister(c)
	full := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	h := s.Handler(full)
	if got := read(t, h, "/metrics?name[]=other_costly"); !strings.Contains(got, "other_costly 7") {
		t.Errorf("the named collector's family is missing:\n%s", got)
	}
	if !s.Unregister(c) {
		t.Fatal("Unregister of a registered collector returned false")
	}
	if got := read(t, h, "/metrics?name[]=other_costly"); got != "" {
		t.Errorf("after Unregister a read of its family answered\n%s\nwant nothing", got)
	}
	if err := s.Register(c); err != nil {
		t.Fatalf("registering it again: %v", err)
	}
	var already prometheus.AlreadyRegisteredError
	if err := s.Register(named{newCostly()}); err == nil || !errors.As(err, &already) {
		t.Errorf("registering a second collector of the same family: %v, want the registry's AlreadyRegisteredError", err)
	}
}

// TestServed_FilterProviderAuthorizesFirst: the metrics server's filter is the outer one
// (authentication and authorization with --metrics-secure) around Handler, so a filtered
// read is refused like any other; without an outer one the filtered read is served.
func TestServed_FilterProviderAuthorizesFirst(t *testing.T) {
	s, reg, other, _ := served(t)
	full := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	refuse := func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
		return func(_ logr.Logger, _ http.Handler) (http.Handler, error) {
			return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }), nil
		}, nil
	}
	for _, c := range []struct {
		name  string
		outer func(*rest.Config, *http.Client) (metricsserver.Filter, error)
		want  int
	}{{"authorization refuses", refuse, http.StatusForbidden}, {"no outer filter", nil, http.StatusOK}} {
		filter, err := s.FilterProvider(c.outer)(&rest.Config{}, http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		h, err := filter(logr.Discard(), full)
		if err != nil {
			t.Fatal(err)
		}
		before := other.gathered
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics?name[]=test_events_total", nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != c.want {
			t.Errorf("%s: a filtered read answered %d %s, want %d", c.name, rec.Code, body, c.want)
		}
		if other.gathered != before {
			t.Errorf("%s: the filtered read gathered the whole registry", c.name)
		}
	}
}

// TestBuiltNames_AreTheFamiliesTheMetricsDescribe: every metric of this package is indexed
// under the name its descriptor carries (a wrong name would only send its reads to the whole
// registry, but then the index does nothing for it).
func TestBuiltNames_AreTheFamiliesTheMetricsDescribe(t *testing.T) {
	fqName := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	for _, c := range All() {
		names := familyNames(c)
		descs := make(chan *prometheus.Desc, 8)
		c.Describe(descs)
		close(descs)
		var described []string
		for d := range descs {
			described = append(described, fqName.FindStringSubmatch(d.String())[1])
		}
		if !slices.Equal(names, described) {
			t.Errorf("a metric is indexed as %v, its descriptor says %v", names, described)
		}
	}
}

// TestServed_AReadOfIndexedFamiliesIsNotCompressed: a read naming indexed families is
// answered uncompressed even when the client accepts gzip (a few kilobytes, read hundreds
// of times a second by a harness); a whole read is compressed as the registry's handler
// compresses it.
func TestServed_AReadOfIndexedFamiliesIsNotCompressed(t *testing.T) {
	_, _, _, h := served(t)
	for url, want := range map[string]string{"/metrics?name[]=test_events_total": "", "/metrics": "gzip"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("Content-Encoding"); rec.Code != http.StatusOK || got != want {
			t.Errorf("GET %s accepting gzip: %d, Content-Encoding %q, want 200 and %q", url, rec.Code, got, want)
		}
	}
}
