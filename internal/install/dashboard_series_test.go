package install

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/internal/operator"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestDashboard_EveryQueriedSeriesExistsOnAFreshOperator runs the operator, scrapes its
// metrics endpoint as `make run` serves it (plain HTTP on loopback) and checks that every
// multicache_* series a dashboard panel queries is there once the cache caught up, before
// anything went wrong: a renamed metric fails, and so does a counter that only appears once
// something happened (its panel would say "No data" on a healthy system).
func TestDashboard_EveryQueriedSeriesExistsOnAFreshOperator(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "grafana", "multicache.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	queried := map[string][]string{} // series -> panels
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			for _, s := range regexp.MustCompile(`multicache_[a-z0-9_]+`).FindAllString(target.Expr, -1) {
				queried[s] = append(queried[s], p.Title)
			}
		}
	}

	// Traffic enough for the sampled store latency (one event in 16) to have observations.
	ns := "dashboard-series"
	mustCreate(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	mustCreate(t, ts.MakeNode("dashboard-node", "8", "16Gi"))
	for i := range 20 {
		mustCreate(t, ts.MakePod(ns, fmt.Sprintf("p%d", i), ts.OnNode("dashboard-node"), ts.Requests("100m", "128Mi")))
	}

	port := freePort(t)
	opts := operator.DefaultOptions()
	opts.MetricsBindAddress, opts.MetricsSecure = fmt.Sprintf("127.0.0.1:%d", port), false
	opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0"
	opts.VerifyPeriod, opts.LowFreePeriod = time.Second, time.Second
	opts.SkipControllerNameValidation = true
	op, err := operator.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the operator stopped with %v", err)
		}
	})
	waitFor(t, "the operator caught up", func() (bool, string) { return op.Ready(), op.CatchUp.Status() })

	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	waitFor(t, "every series the dashboard queries is served", func() (bool, string) {
		served, err := scrapeSeries(url)
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for s, panels := range queried {
			if !served[s] {
				missing = append(missing, fmt.Sprintf("%s (panels %q)", s, panels))
			}
		}
		sort.Strings(missing)
		return len(missing) == 0, "not served: " + strings.Join(missing, ", ")
	})
}

// scrapeSeries returns the names of the series a Prometheus text endpoint serves.
func scrapeSeries(url string) (map[string]bool, error) {
	resp, err := http.Get(url) //nolint:noctx // a loopback test server
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out, sc.Err()
}
