package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What the suite reads from a replica: its debug server (compare, dump) and its metrics.
// The types mirror the JSON, not the operator's Go types, so that the suite checks what an
// operator of the cluster would see.

// Difference is one entry of /debug/cache/compare.
type Difference struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Problem string `json:"problem"`
	// The resource versions the cache and the API hold ("" where one holds none).
	CacheVersion string `json:"cacheVersion,omitempty"`
	APIVersion   string `json:"apiVersion,omitempty"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s %s: %s (cache %q, API %q)", d.Kind, d.Key, d.Problem, d.CacheVersion, d.APIVersion)
}

// Dump is /debug/cache.
type Dump struct {
	Nodes        map[string]NodeDump        `json:"nodes"`
	Pods         map[string]PodDump         `json:"pods"`
	PodGroups    map[string]GroupDump       `json:"podGroups"`
	Reservations map[string]ReservationDump `json:"reservations"`
}

// NodeDump is one node of the dump.
type NodeDump struct {
	Sources             []string            `json:"sources"`
	Requested           corev1.ResourceList `json:"requested"`
	BestEffortRequested corev1.ResourceList `json:"bestEffortRequested"`
	Reserved            corev1.ResourceList `json:"reserved"`
	Pods                []string            `json:"pods"`
	Reservations        []string            `json:"reservations"`
}

// PodDump is one pod of the dump.
type PodDump struct {
	Node  string `json:"node"`
	State string `json:"state"`
}

// GroupDump is one pod group of the dump.
type GroupDump struct {
	Exists    bool   `json:"exists"`
	MinMember int32  `json:"minMember"`
	Phase     string `json:"phase"`
	Counts    struct {
		Pending, Scheduled, Running, Succeeded, Failed int32
	} `json:"counts"`
}

// ReservationDump is one reservation of the dump.
type ReservationDump struct {
	Phase      string              `json:"phase"`
	Node       string              `json:"node"`
	Resources  corev1.ResourceList `json:"resources"`
	Owner      string              `json:"owner"`
	ReservedAt *time.Time          `json:"reservedAt"`
	ExpiresAt  *time.Time          `json:"expiresAt"`
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

func getJSON(ctx context.Context, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}

// Compare returns the replica's /debug/cache/compare.
func (r *Replica) Compare(ctx context.Context) ([]Difference, error) {
	var diffs []Difference
	err := getJSON(ctx, "http://"+r.DebugAddr+"/debug/cache/compare", &diffs)
	return diffs, err
}

// Dump returns the replica's /debug/cache.
func (r *Replica) Dump(ctx context.Context) (*Dump, error) {
	d := &Dump{}
	return d, getJSON(ctx, "http://"+r.DebugAddr+"/debug/cache", d)
}

// Metrics are samples by "name{label="value",...}" (labels as the exposition prints them).
type Metrics map[string]float64

// Metrics scrapes /metrics (text exposition).
func (r *Replica) Metrics(ctx context.Context) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := Metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// Sum adds the samples of a metric whose labels contain every given `key="value"`.
func (m Metrics) Sum(name string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		base := k
		if i := strings.IndexByte(k, '{'); i >= 0 {
			base = k[:i]
		}
		if base != name {
			continue
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(k, l) {
				ok = false
				break
			}
		}
		if ok {
			total += v
		}
	}
	return total
}

// ByLabel returns the samples of a metric by the value of one label.
func (m Metrics) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	prefix := name + "{"
	for k, v := range m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		i := strings.Index(k, label+`="`)
		if i < 0 {
			continue
		}
		val := k[i+len(label)+2:]
		if j := strings.IndexByte(val, '"'); j >= 0 {
			val = val[:j]
		}
		out[val] += v
	}
	return out
}

// Leading reports whether the replica says it holds the lease
// (leader_election_master_status).
func (r *Replica) Leading(ctx context.Context) bool {
	if !r.Running() {
		return false
	}
	m, err := r.Metrics(ctx)
	return err == nil && m.Sum("leader_election_master_status") > 0
}
