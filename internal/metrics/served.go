package metrics

import (
	"net/http"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Named is a collector that knows the names of the metric families it exports.
type Named interface {
	prometheus.Collector
	// MetricNames returns the name of every family Collect sends.
	MetricNames() []string
}

// Served registers collectors on the registry the metrics server serves (controller-runtime's)
// and keeps each collector whose family names it knows (Named, or built by this package) in a
// registry of its own. A read of /metrics that names, with name[], only families of such
// collectors is then answered from a gather of those collectors alone: client_golang's
// promhttp honours name[] by dropping families after gathering every collector (at 150,000
// pods one read of multicache_events_total gathered 184 families, the process collector
// reading /proc, the Go collector runtime/metrics, every workqueue histogram), and a
// harness reading one counter every 10 ms spent a core on it. Such a read is answered
// uncompressed: it is a few kilobytes, and gzip was a quarter of serving it
// (BenchmarkServed_EventsRead). Any other read, and every read naming a family of another
// collector, is the registry's as before.
type Served struct {
	reg prometheus.Registerer

	mu sync.RWMutex
	// byName is the registry of the collector that exports each family.
	byName map[string]*prometheus.Registry
	// of is the registry of each collector indexed, with its names.
	of map[prometheus.Collector]indexed
}

type indexed struct {
	reg   *prometheus.Registry
	names []string
}

var _ prometheus.Registerer = (*Served)(nil)

// ControllerRuntime is controller-runtime's registry, the one its metrics server serves (the
// operator registers its metrics here and sets FilterProvider on its metrics server).
var ControllerRuntime = NewServed(ctrlmetrics.Registry)

// NewServed returns a Served whose collectors are registered on reg, the registry the
// metrics server serves.
func NewServed(reg prometheus.Registerer) *Served {
	return &Served{reg: reg, byName: map[string]*prometheus.Registry{}, of: map[prometheus.Collector]indexed{}}
}

// Register implements prometheus.Registerer: c is registered on the served registry and,
// when its family names are known, indexed.
func (s *Served) Register(c prometheus.Collector) error {
	if err := s.reg.Register(c); err != nil {
		return err
	}
	names := familyNames(c)
	if len(names) == 0 {
		return nil
	}
	own := prometheus.NewRegistry()
	if own.Register(c) != nil {
		// A collector the served registry accepted is accepted alone; were it not, it
		// would still be served in every whole read.
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.of[c] = indexed{own, names}
	for _, n := range names {
		s.byName[n] = own
	}
	return nil
}

// MustRegister implements prometheus.Registerer.
func (s *Served) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := s.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister implements prometheus.Registerer.
func (s *Served) Unregister(c prometheus.Collector) bool {
	s.mu.Lock()
	if ix, ok := s.of[c]; ok {
		delete(s.of, c)
		for _, n := range ix.names {
			if s.byName[n] == ix.reg {
				delete(s.byName, n)
			}
		}
	}
	s.mu.Unlock()
	return s.reg.Unregister(c)
}

// familyNames returns the family names of c when known: Named's, or those of a metric this
// package built.
func familyNames(c prometheus.Collector) []string {
	if n, ok := c.(Named); ok {
		return n.MetricNames()
	}
	if name, ok := builtNames[c]; ok {
		return []string{name}
	}
	return nil
}

// gatherer returns what gathers the families names: the registries of their collectors, or
// false when one is not indexed.
func (s *Served) gatherer(names []string) (prometheus.Gatherer, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var regs prometheus.Gatherers
	for _, n := range names {
		reg, ok := s.byName[n]
		if !ok {
			return nil, false
		}
		if !slices.Contains(regs, prometheus.Gatherer(reg)) {
			regs = append(regs, reg)
		}
	}
	if len(regs) == 1 {
		return regs[0], true
	}
	return regs, true
}

// metricsPath is where controller-runtime's metrics server serves the registry.
const metricsPath = "/metrics"

// Handler returns next, the metrics server's handler of the whole registry, except for a
// read of /metrics whose name[] parameters all name indexed families: that one is served by
// promhttp (which applies name[] too) from a gather of their collectors alone, with the
// error handling controller-runtime's server sets.
func (s *Served) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == metricsPath {
			if names := req.URL.Query()["name[]"]; len(names) > 0 {
				if g, ok := s.gatherer(names); ok {
					promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError, DisableCompression: true}).ServeHTTP(w, req)
					return
				}
			}
		}
		next.ServeHTTP(w, req)
	})
}

// FilterProvider is the metrics server's FilterProvider: outer's filter (nil: none; the
// authentication and authorization of --metrics-secure) around Handler, so that a read
// Handler answers is authorized first like any other.
func (s *Served) FilterProvider(outer func(*rest.Config, *http.Client) (metricsserver.Filter, error)) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(cfg *rest.Config, client *http.Client) (metricsserver.Filter, error) {
		var filter metricsserver.Filter
		if outer != nil {
			var err error
			if filter, err = outer(cfg, client); err != nil {
				return nil, err
			}
		}
		return func(log logr.Logger, next http.Handler) (http.Handler, error) {
			h := s.Handler(next)
			if filter == nil {
				return h, nil
			}
			return filter(log, h)
		}, nil
	}
}
