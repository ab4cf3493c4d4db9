package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/internal/harness"
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
	Requested           corev1.ResourceList `json:"requested"`
	BestEffortRequested corev1.ResourceList `json:"bestEffortRequested"`
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
	Phase  string `json:"phase"`
	Counts struct {
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

// debugTimeout bounds a read of a replica's debug server: the comparison lists the whole
// cluster from the API.
const debugTimeout = time.Minute

func getJSON(ctx context.Context, url string, into any) error {
	body, err := harness.Get(ctx, url, debugTimeout)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, into)
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

// Metrics scrapes the replica's /metrics, with the debug endpoints' patience: a replica
// under the long run's load may take longer than the harness's default.
func (r *Replica) Metrics(ctx context.Context) (harness.Metrics, error) {
	body, err := harness.Get(ctx, "http://"+r.MetricsAddr+"/metrics", debugTimeout)
	if err != nil {
		return nil, err
	}
	return harness.ParseMetrics(body), nil
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
