package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/seed0f91f25e/multicache/internal/harness"
	"github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/test/chaos/apiproxy"
)

// Harness runs one chaos run: the control plane (shared, from TestMain), two operator
// replicas as processes, the recorder, the workload, the faults and the checks.
type Harness struct {
	Cfg      Config
	Env      *testsupport.Env
	Out      string
	Bin      string
	NS       string
	LeaseNS  string
	Lease    string
	Replicas []*Replica
	Rec      *Recorder
	W        *Workload
	Results  *Results

	logf   func(string, ...any)
	cs     kubernetes.Interface
	rngMu  sync.Mutex
	rng    *rand.Rand
	cancel context.CancelFunc
	wdone  chan struct{}
	// metrics keeps the last scrape of every incarnation (replica/incarnation).
	metricsMu sync.Mutex
	// lastRound is how long the last round of comparisons took (waitCompareEmpty).
	lastRound time.Duration
	// apiDisruptions are when the API server faults (restart, 410) were injected: client-go's
	// reflectors back off longer with every relist in a 2-minute window (backoffWindow).
	apiDisruptions []time.Time
	// floor is the bare informers the 410 relists are judged against (floor.go).
	floor              *informerFloor
	metrics            map[string]harness.Metrics
	reportedInvariants map[string]float64
}

// NewHarness prepares a run: output directory, binary, namespace. logf receives progress.
func NewHarness(env *testsupport.Env, cfg Config, logf func(string, ...any)) (*Harness, error) {
	out := cfg.OutDir
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "multicache-chaos-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, err
	}
	h := &Harness{
		Cfg: cfg, Env: env, Out: out, NS: fmt.Sprintf("chaos-%d", cfg.Seed), LeaseNS: "default",
		Lease: fmt.Sprintf("multicache-chaos-%d", cfg.Seed), logf: logf, cs: cs,
		rng:     rand.New(rand.NewPCG(cfg.Seed, 7)),
		Results: &Results{Config: cfg.String()}, metrics: map[string]harness.Metrics{}, reportedInvariants: map[string]float64{},
	}
	h.Rec = NewRecorder(h.Lease)
	return h, nil
}

func (h *Harness) intn(n int) int {
	h.rngMu.Lock()
	defer h.rngMu.Unlock()
	return h.rng.IntN(n)
}

// Setup builds the operator, populates the cluster, starts the recorder and the replicas
// (measuring a cold start) and the workload.
func (h *Harness) Setup(ctx context.Context) error {
	// The operator builds while the cluster is populated.
	h.Bin = filepath.Join(h.Out, "chaos-operator")
	var flags []string
	if h.Cfg.Race {
		flags = append(flags, "-race")
	}
	built, began := make(chan error, 1), time.Now()
	go func() {
		built <- harness.GoBuild(filepath.Join(h.Env.RepoRoot, "test", "chaos"), "./cmd/chaos-operator", h.Bin, flags...)
	}()

	if err := h.Env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.NS}}); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	if err := h.Rec.Start(rctx, h.Env.Config, h.Env.Scheme, h.NS, h.LeaseNS); err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	h.W = NewWorkload(h.Env.Client, h.cs, h.NS, h.Cfg, h.Rec, h.logf)
	start := time.Now()
	if err := h.W.Populate(ctx); err != nil {
		return fmt.Errorf("populating: %w", err)
	}
	h.logf("populated %d nodes, %d pods, %d reservations in %v", h.Cfg.Nodes, h.Cfg.Pods, h.Cfg.BaseReservations,
		time.Since(start).Round(time.Millisecond))
	h.floor = startInformerFloor(rctx, h.cs)
	if err := <-built; err != nil {
		return err
	}
	h.logf("built %s (race %v) while populating, %v after setup began", h.Bin, h.Cfg.Race, time.Since(began).Round(time.Millisecond))

	common := []string{
		"--leader-elect", "--leader-election-namespace=" + h.LeaseNS, "--leader-election-id=" + h.Lease,
		"--leader-elect-lease-duration=" + h.Cfg.LeaseDuration.String(), "--leader-elect-renew-deadline=" + h.Cfg.RenewDeadline.String(),
		"--leader-elect-retry-period=" + h.Cfg.RetryPeriod.String(),
		"--pod-assumed-ttl=" + h.Cfg.PodAssumedTTL.String(), "--period=" + h.Cfg.Period.String(),
		"--verify-period=" + h.Cfg.VerifyPeriod.String(),
		"--reservation-default-ttl=" + h.Cfg.ReservationTTL.String(), "--reservation-gc-grace=" + h.Cfg.ReservationGCGrace.String(),
		"--component-name=multicache-chaos", "--low-free-threshold=0",
	}
	common = append(common, h.Cfg.OperatorArgs...)
	// Each replica reaches the API server through a proxy of its own (the network faults);
	// replica a runs the simulated scheduler.
	for _, name := range []string{"a", "b"} {
		p, err := apiproxy.Start(h.Env.Config)
		if err != nil {
			return err
		}
		kubeconfig := filepath.Join(h.Out, name+".kubeconfig")
		if err := writeKubeconfig(kubeconfig, p.URL()); err != nil {
			return err
		}
		args := append(slices.Clone(common), "--kubeconfig="+kubeconfig)
		if name == "a" {
			args = append(args, "--chaos-scheduler-name="+SchedulerName, "--chaos-slow-bind="+h.Cfg.SlowBind.String(),
				fmt.Sprintf("--chaos-seed=%d", h.Cfg.Seed))
		}
		r, err := NewReplica(name, h.Bin, h.Out, args, h.logf)
		if err != nil {
			return err
		}
		r.Proxy = p
		h.Replicas = append(h.Replicas, r)
	}

	// The first start on the populated cluster also writes the status of every reservation
	// and gang (the leader's first wave of writes), so its comparison is empty only once
	// that is done. The cold start the faults compare with is the second replica's, on a
	// settled cluster: from its start until its cache equals the API.
	var err error
	if h.Results.FirstReady, h.Results.FirstFull, err = h.coldStart(ctx, h.Replicas[0]); err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	h.logf("first start of replica a: ready after %v, cache equal to the API (every status written) after %v",
		h.Results.FirstReady.Round(time.Millisecond), h.Results.FirstFull.Round(time.Millisecond))
	if h.Results.ColdReady, h.Results.ColdFull, err = h.coldStart(ctx, h.Replicas[1]); err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	h.logf("cold start of replica b on the settled cluster: ready after %v, cache equal to the API after %v",
		h.Results.ColdReady.Round(time.Millisecond), h.Results.ColdFull.Round(time.Millisecond))
	if _, err := h.waitLeader(ctx, h.Cfg.RecoveryBound); err != nil {
		return err
	}
	h.wdone = make(chan struct{})
	go func() {
		defer close(h.wdone)
		h.W.Run(rctx)
	}()
	h.W.Pause()
	return nil
}

// coldStart starts r and returns how long until it was ready and until its cache equaled
// the API.
func (h *Harness) coldStart(ctx context.Context, r *Replica) (ready, full time.Duration, err error) {
	start := time.Now()
	if err := r.Start(); err != nil {
		return 0, 0, err
	}
	if err := r.WaitReady(ctx, h.Cfg.RecoveryBound); err != nil {
		return 0, 0, err
	}
	ready = time.Since(start)
	_, err = h.waitCompareEmpty(ctx, []*Replica{r}, h.Cfg.RecoveryBound, nil)
	return ready, time.Since(start), err
}

// Teardown stops the workload, the recorder and the replicas (safe to call twice).
func (h *Harness) Teardown() {
	if h.W != nil {
		h.W.Resume()
	}
	if h.cancel != nil {
		h.cancel()
	}
	if h.wdone != nil {
		<-h.wdone
		h.wdone = nil
	}
	for _, r := range h.Replicas {
		r.Shutdown()
		if r.Proxy != nil {
			_ = r.Proxy.Close()
		}
	}
}

// writeKubeconfig writes a kubeconfig that points at server (a replica's proxy, which adds
// the credentials).
func writeKubeconfig(path, server string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["api"] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["api"] = &clientcmdapi.Context{Cluster: "api", AuthInfo: "proxy"}
	cfg.CurrentContext = "api"
	return clientcmd.WriteToFile(*cfg, path)
}

// leader returns the replica that says it leads, if exactly one does.
func (h *Harness) leader(ctx context.Context) *Replica {
	var found *Replica
	for _, r := range h.Replicas {
		if r.Leading(ctx) {
			if found != nil {
				return nil
			}
			found = r
		}
	}
	return found
}

// waitLeader waits until one replica leads.
func (h *Harness) waitLeader(ctx context.Context, bound time.Duration) (*Replica, error) {
	var l *Replica
	if !poll(bound, 100*time.Millisecond, func() bool { l = h.leader(ctx); return l != nil }) {
		return nil, fmt.Errorf("no replica leads after %v", bound)
	}
	return l, nil
}

// poll calls done every interval until it reports true or bound has passed; it reports
// whether done did.
func poll(bound, interval time.Duration, done func() bool) bool {
	deadline := time.Now().Add(bound)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}

// other returns the replica that is not r.
func (h *Harness) other(r *Replica) *Replica {
	if h.Replicas[0] == r {
		return h.Replicas[1]
	}
	return h.Replicas[0]
}
