package operator

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// gatherCounter is a collector of another library on controller-runtime's registry; it
// counts the gathers that reach it.
type gatherCounter struct {
	desc *prometheus.Desc
	n    chan struct{}
}

func (g *gatherCounter) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }
func (g *gatherCounter) Collect(ch chan<- prometheus.Metric) {
	g.n <- struct{}{}
	ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, 1)
}

// TestMetricsServer_AReadOfMulticacheFamiliesGathersOnlyThem: through the operator's metrics
// server, a read naming multicache's families (how the e2e harness polls
// multicache_events_total) answers them without gathering the rest of controller-runtime's
// registry; a read naming nothing gathers it all; with --metrics-secure the filtered read
// is refused without credentials like any other.
func TestMetricsServer_AReadOfMulticacheFamiliesGathersOnlyThem(t *testing.T) {
	other := &gatherCounter{desc: prometheus.NewDesc("test_other_library", "A collector of another library.", nil, nil), n: make(chan struct{}, 100)}
	ctrlmetrics.Registry.MustRegister(other)
	t.Cleanup(func() { ctrlmetrics.Registry.Unregister(other) })

	addr := freeAddr(t)
	startOperator(t, func(o *Options) { o.MetricsBindAddress, o.MetricsSecure = addr, false })
	url := "http://" + addr + "/metrics"
	waitServing(t, url)
	drain := func() int {
		n := 0
		for {
			select {
			case <-other.n:
				n++
			default:
				return n
			}
		}
	}
	drain()

	body := getBody(t, http.DefaultClient, url+"?name[]=multicache_events_total&name[]=multicache_store_objects", http.StatusOK)
	for _, want := range []string{"# TYPE multicache_events_total counter", `multicache_store_objects{store="pods"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("the filtered read misses %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "go_goroutines") || strings.Contains(body, "test_other_library") {
		t.Errorf("the filtered read answered families it did not name:\n%s", body)
	}
	if n := drain(); n != 0 {
		t.Errorf("the filtered read gathered the other collectors (%d gathers reached one)", n)
	}
	if body := getBody(t, http.DefaultClient, url, http.StatusOK); !strings.Contains(body, "test_other_library 1") {
		t.Errorf("the whole read misses the other collector:\n%s", body)
	}
	if n := drain(); n != 1 {
		t.Errorf("the whole read reached the other collector %d times, want 1", n)
	}

	secure := freeAddr(t)
	startOperator(t, func(o *Options) { o.MetricsBindAddress, o.MetricsSecure = secure, true })
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's self-signed server
	surl := "https://" + secure + "/metrics?name[]=multicache_events_total"
	waitAnswering(t, insecure, surl)
	getBody(t, insecure, surl, http.StatusUnauthorized)
	if n := drain(); n != 0 {
		t.Errorf("the refused read gathered (%d gathers reached a collector)", n)
	}
}

// getBody reads url with client and checks the status.
func getBody(t *testing.T, client *http.Client, url string, status int) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %s %s, want %d", url, resp.Status, body, status)
	}
	return string(body)
}

// waitAnswering waits until url answers anything.
func waitAnswering(t *testing.T, client *http.Client, url string) {
	t.Helper()
	eventually(t, url+" answers", func() (bool, string) {
		resp, err := client.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return true, ""
	})
}
