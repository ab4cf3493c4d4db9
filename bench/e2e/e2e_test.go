package e2e

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// TestSmall is the correctness run `make test` keeps of `make bench-e2e`: SIZE=small, one
// round, one short churn step. It fails when a subject never holds every object, when a
// multicache store does not hold the population, when multicache misses or rejects a churn
// event, and when /debug/cache/compare is not empty after the churn. Speed is not checked.
//
// It needs KUBEBUILDER_ASSETS (kube-apiserver, etcd); kube-scheduler is a subject only when
// KUBEBUILDER_ASSETS also holds it (`make kube-scheduler`). MULTICACHE_BIN names the
// operator binary; without it the test builds one from the main module.
func TestSmall(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make bench-e2e-check`")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mcBin := os.Getenv("MULTICACHE_BIN")
	if mcBin == "" {
		mcBin = filepath.Join(dir, "multicache")
		if err := harness.GoBuild(repo, ".", mcBin); err != nil {
			t.Fatal(err)
		}
	}
	informerBin := filepath.Join(dir, "informer")
	if err := harness.GoBuild(".", "./cmd/informer", informerBin); err != nil {
		t.Fatal(err)
	}
	mc := MulticacheSubject(mcBin)
	subjects := []Subject{InformerSubject(informerBin), MulticacheKindsInformerSubject(informerBin)}
	if sched := filepath.Join(assets, "kube-scheduler"); fileExists(sched) {
		subjects = append(subjects, SchedulerFlagsSubject(StockSchedulerName, sched, 0))
	} else {
		t.Logf("kube-scheduler is not in %s: its subject is skipped (make kube-scheduler builds it)", assets)
	}
	// The same binary as the baseline: the before/after subject runs and is reported.
	subjects = append(subjects, mc, BaselineSubject(mcBin))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log strings.Builder
	// With devices: the devices store must count every slice, claim and class.
	size, err := Sizes["small"].WithDevices(DefaultDevicesPerNode, DefaultClaimsPerNode)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, Config{
		Size: size, Rounds: 1, Subjects: subjects, Multicache: mc,
		Assets: assets, RepoRoot: repo, Dir: dir, Writers: 16,
		Timing:   Timing{Poll: 100 * time.Millisecond, Timeout: 2 * time.Minute, Settle: time.Second},
		Cooldown: time.Second,
		// Every shard's replica is full with exactly its nodes and their pods, and its
		// comparison is empty (runShards checks both).
		Shards: []int{8},
		ShardSubject: func(key, shard string) Subject {
			return MulticacheSubject(mcBin, "--sub-cluster-key="+key, "--sub-cluster="+shard)
		},
		ChurnInformer: subjects[0],
		Churn: Churn{
			Steps:   []ChurnStep{{Rate: 100, Duration: 3 * time.Second}},
			Workers: 16, Poll: 10 * time.Millisecond, DrainTimeout: time.Minute, Pause: time.Second,
			// The idle and polled CPU are reported, not checked: a second each, not five.
			OverheadWindow: time.Second,
		},
		Log: &log,
	})
	t.Log("\n" + log.String())
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	WriteReport(&report, res, harness.Machine(repo))
	t.Log("\n" + report.String())

	if got := len(res.ColdStarts); got != len(subjects) {
		t.Errorf("%d cold starts, want %d (one per subject)", got, len(subjects))
	}
	if line := "multicache / " + BaselineName + ", two builds in the same rounds: time to full "; !strings.Contains(report.String(), line) {
		t.Errorf("the report has no line %q", line)
	}
	for _, p := range res.Problems() {
		t.Error(p)
	}
	checkAPICosts(t, res)
	if r := res.ShardRun; r == nil || len(r.Wholes) != 1 || len(r.Splits) != 1 || len(r.Splits[0].Shards) != 1 || len(r.Splits[0].Shards[0]) != 8 {
		t.Errorf("shard mode: %+v, want one round of the whole-cluster replica and 8 shards", r)
	}
	if len(res.CompareFloor) != 2 || res.CompareFloor[0] <= 0 {
		t.Errorf("the comparison's list floor: %v, want two positive measurements", res.CompareFloor)
	}
	if res.Churn == nil || len(res.Churn.Phases) != numOps {
		t.Fatalf("churn phases: %+v, want one per operation", res.Churn)
	}
	for _, ph := range res.Churn.Phases {
		if ph.Writes == 0 {
			t.Errorf("churn %s: no write succeeded", opNames[ph.Op])
		}
		// The bare informer alongside, read alike, showed every write too.
		if ph.InformerLag.N != ph.Writes || ph.InformerMissing != 0 {
			t.Errorf("churn %s: the informer read alike showed %d of %d writes (%d missing)", opNames[ph.Op], ph.InformerLag.N, ph.Writes, ph.InformerMissing)
		}
	}
	if res.Churn.DuringDump == nil {
		t.Error("no churn phase during dumps")
	}
}

// checkAPICosts checks what the harness read of the API server: every subject streamed
// every pod, and multicache and kube-scheduler asked for pods in the encoding the informer
// asks for (protobuf: about the same bytes per event; JSON would be half as much again).
// Not exactly: a pod that changes while a subject starts adds an event of another size (an
// exact comparison failed on a loaded machine, 1569 bytes against 1569 rounded).
func checkAPICosts(t *testing.T, res *Result) {
	t.Helper()
	var informerBytes float64
	for _, c := range res.ColdStarts {
		if c.API == nil {
			t.Fatalf("%s: no API server costs", c.Subject)
		}
		if c.Subject == "informer" {
			informerBytes = c.API.Row("WATCH", "pods").BytesPerEvent()
		}
	}
	for _, c := range res.ColdStarts {
		pods := c.API.Row("WATCH", "pods")
		if pods.WatchEvents < res.Config.Size.Pods || pods.StreamedLists != 1 {
			t.Errorf("%s: %d pod watch events in %d streamed lists; want at least %d in one", c.Subject, pods.WatchEvents, pods.StreamedLists, res.Config.Size.Pods)
		}
		if got := pods.BytesPerEvent(); math.Abs(got-informerBytes) > 0.05*informerBytes {
			t.Errorf("%s: %.1f bytes per pod event, the protobuf informer %.1f: it asks for another encoding", c.Subject, got, informerBytes)
		}
		if c.API.APIServerCPU <= 0 {
			t.Errorf("%s: no API server CPU during its start", c.Subject)
		}
	}
	for _, c := range res.ColdStarts {
		if c.Subject == "informer-mc-kinds" || c.Subject == "multicache" || c.Subject == BaselineName {
			if rs := c.API.Row("WATCH", "resourceslices.resource.k8s.io"); rs.WatchEvents < res.Config.Size.ResourceSlices() {
				t.Errorf("%s: %d ResourceSlice events, want at least %d", c.Subject, rs.WatchEvents, res.Config.Size.ResourceSlices())
			}
		}
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
