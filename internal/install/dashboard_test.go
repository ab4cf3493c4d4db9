package install

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// documentedMetric is one row of the README's metrics table (which
// internal/operator's TestREADME_FlagsAndMetricsTablesMatchTheCode keeps equal to what the
// operator registers).
type documentedMetric struct {
	kind   string // counter, gauge, histogram
	labels map[string]bool
}

// readmeMetrics parses the README's "## Metrics" table: name -> type and labels.
func readmeMetrics(t *testing.T) map[string]documentedMetric {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(env.RepoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(multicache_[a-z0-9_]+)(\\{([a-z_,]*)\\})?` \\| ([a-z]+) \\|")
	out := map[string]documentedMetric{}
	in := false
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## Metrics"
			continue
		}
		if m := row.FindStringSubmatch(line); in && m != nil {
			labels := map[string]bool{}
			for _, l := range strings.Split(m[3], ",") {
				if l != "" {
					labels[l] = true
				}
			}
			out[m[1]] = documentedMetric{kind: m[4], labels: labels}
		}
	}
	if len(out) == 0 {
		t.Fatal("no metrics table in README.md")
	}
	return out
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name, Type string
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// scrapeLabels are the labels Prometheus adds to every series of the operator.
var scrapeLabels = map[string]bool{"namespace": true, "pod": true, "instance": true, "job": true, "service": true, "container": true, "endpoint": true}

// TestDashboard_QueriesOnlyMetricsMulticacheExports checks config/grafana/multicache.json:
// every multicache_* series a panel queries is in the README's metrics table (the
// _bucket, _sum and _count series of a histogram), every label it groups or filters by is
// one that metric has, and it shows what an operator watches first.
func TestDashboard_QueriesOnlyMetricsMulticacheExports(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "grafana", "multicache.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("multicache.json is not JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard has no uid or title")
	}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, v := range []string{"datasource", "namespace", "pod"} {
		if !vars[v] {
			t.Errorf("the dashboard has no $%s variable", v)
		}
	}

	documented := readmeMetrics(t)
	series := regexp.MustCompile(`multicache_[a-z0-9_]+`)
	groupBy := regexp.MustCompile(`(?:by|without) \(([a-z_, ]*)\)`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	queried := map[string]bool{}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the $datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, target := range p.Targets {
			expr := target.Expr
			if strings.Count(expr, "(") != strings.Count(expr, ")") || strings.Count(expr, "{") != strings.Count(expr, "}") {
				t.Errorf("panel %q: unbalanced expression %s", p.Title, expr)
			}
			var metrics []string
			for _, name := range series.FindAllString(expr, -1) {
				base, m := metricOf(name, documented)
				if m == nil {
					t.Errorf("panel %q queries %s, which multicache does not export (not in README's metrics table)", p.Title, name)
					continue
				}
				queried[base] = true
				metrics = append(metrics, base)
			}
			// Labels grouped by or matched must belong to every metric of the expression.
			var labels []string
			for _, g := range groupBy.FindAllStringSubmatch(expr, -1) {
				for _, l := range strings.Split(g[1], ",") {
					labels = append(labels, strings.TrimSpace(l))
				}
			}
			for _, m := range matcher.FindAllStringSubmatch(expr, -1) {
				labels = append(labels, m[1])
			}
			for _, l := range labels {
				for _, base := range metrics {
					if l != "" && l != "le" && !scrapeLabels[l] && !documented[base].labels[l] {
						t.Errorf("panel %q: %s has no label %q", p.Title, base, l)
					}
				}
			}
		}
	}
	for _, want := range []string{
		"multicache_events_total", "multicache_store_op_duration_seconds", "multicache_store_objects",
		"multicache_assumed_pods", "multicache_expired_pods_total", "multicache_reservations",
		"multicache_drift_total", "multicache_invariant_violations_total",
		"multicache_cache_caught_up", "multicache_cache_catch_up_seconds", "multicache_reserve_on_delete_total",
	} {
		if !queried[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	var missing []string
	for name := range documented {
		if !queried[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Logf("exported but not on the dashboard: %v", missing)
	}
}

// metricOf maps a queried series to its documented metric: itself, or the histogram a
// _bucket, _sum or _count series belongs to.
func metricOf(series string, documented map[string]documentedMetric) (string, *documentedMetric) {
	if m, ok := documented[series]; ok {
		if m.kind == "histogram" {
			return series, nil // a histogram is queried through its series
		}
		return series, &m
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base := strings.TrimSuffix(series, suffix)
		if m, ok := documented[base]; ok && base != series && m.kind == "histogram" {
			if suffix == "_bucket" {
				m.labels = withLE(m.labels)
			}
			return base, &m
		}
	}
	return series, nil
}

func withLE(labels map[string]bool) map[string]bool {
	out := map[string]bool{"le": true}
	for l := range labels {
		out[l] = true
	}
	return out
}

// TestDashboard_ConfigMapForTheGrafanaSidecar renders config/grafana and applies the
// ConfigMap to the API server: the label the Grafana sidecar looks for, the JSON intact.
func TestDashboard_ConfigMapForTheGrafanaSidecar(t *testing.T) {
	out, err := exec.Command(kustomize(t), "build", filepath.Join(env.RepoRoot, "config", "grafana")).Output()
	if err != nil {
		t.Fatalf("kustomize build config/grafana: %v", err)
	}
	objs := decodeYAML(t, out)
	if len(objs) != 1 || objs[0].GetKind() != "ConfigMap" {
		t.Fatalf("config/grafana renders %d objects, want one ConfigMap", len(objs))
	}
	cm := objs[0]
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the ConfigMap has labels %v, want grafana_dashboard=1", cm.GetLabels())
	}
	ctx := context.Background()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}})
	cm.SetNamespace("monitoring")
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner("install-test")); err != nil {
		t.Fatalf("the API server rejects the dashboard ConfigMap: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "monitoring", Name: cm.GetName()}, got); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(env.RepoRoot, "config", "grafana", "multicache.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["multicache.json"] != string(want) {
		t.Error("the ConfigMap's multicache.json differs from config/grafana/multicache.json")
	}
}
