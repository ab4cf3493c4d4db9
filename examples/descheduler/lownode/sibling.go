package lownode

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Evictions is lownode_evictions_total{result}: evicted, refused (the API server's budget
// check said no: the cache's budget status was behind), or failed.
var Evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "lownode_evictions_total", Help: "Evictions lownode asked for, by result (evicted, refused, failed).",
}, []string{"result"})

// Descheduler plans on a fork of a cache snapshot every interval and evicts the plan's pods.
type Descheduler struct {
	cache    multicache.Reader
	writer   client.Client
	recorder multicache.EventRecorder
	acct     store.Accounting
	settings Settings
	log      logr.Logger
	snap     *multicache.Snapshot
}

// New is the sibling's factory (multicache.WithSiblingSettings(lownode.DefaultSettings(),
// lownode.New)).
func New(deps multicache.SiblingDeps, s *Settings) (multicache.Sibling, error) {
	var already prometheus.AlreadyRegisteredError
	if err := deps.Metrics.Register(Evictions); err != nil && !errors.As(err, &already) {
		return nil, err
	}
	return &Descheduler{cache: deps.Reader, writer: deps.Writer, recorder: deps.Recorder, acct: deps.Accounting,
		settings: *s, log: deps.Log.WithName("lownode")}, nil
}

// NeedLeaderElection implements multicache.Sibling: it evicts, so only the leader runs it.
func (d *Descheduler) NeedLeaderElection() bool { return true }

// Start implements multicache.Sibling.
func (d *Descheduler) Start(ctx context.Context) error {
	d.snap = d.cache.NewSnapshot(multicache.SnapshotOptions{})
	ticker := time.NewTicker(d.settings.Interval)
	defer ticker.Stop()
	for {
		d.Run(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Run plans once on a fresh fork and, with --lownode-evict, evicts the plan's pods.
func (d *Descheduler) Run(ctx context.Context) []Move {
	if err := d.cache.UpdateSnapshot(d.snap); err != nil {
		d.log.Error(err, "updating the snapshot")
		return nil
	}
	fork := d.snap.Fork()
	defer fork.Revert()
	moves := Plan(fork, d.acct, d.settings)
	if d.log.V(1).Enabled() {
		used := map[string]int{}
		for _, n := range d.snap.NodeInfos() {
			used[n.Name] = usedPercent(n)
		}
		d.log.V(1).Info("planned", "generation", d.snap.Generation(), "cpuRequestedPercent", used, "moves", len(moves))
	}
	for _, m := range moves {
		log := d.log.WithValues("pod", m.Pod, "from", m.From, "roomOn", m.To)
		if !d.settings.Evict {
			log.Info("would evict (--lownode-evict is off)")
			continue
		}
		ps, ok := d.snap.PodState(m.Pod)
		if !ok {
			continue
		}
		switch err := d.evict(ctx, ps.Pod); {
		case err == nil:
			Evictions.WithLabelValues("evicted").Inc()
			d.recorder.Eventf(ps.Pod, nil, corev1.EventTypeNormal, "LowNodeUtilization", "Evict",
				"evicted from %s (over %d%% of its CPU requested); %s has room", m.From, d.settings.High, m.To)
			log.Info("evicted")
		case apierrors.IsTooManyRequests(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			Evictions.WithLabelValues("refused").Inc()
			log.Info("eviction refused", "reason", err.Error())
		default:
			Evictions.WithLabelValues("failed").Inc()
			log.Error(err, "evicting")
		}
	}
	return moves
}

// evict asks the API server to evict pod, its UID as precondition: the budgets are checked
// again there, against their status.
func (d *Descheduler) evict(ctx context.Context, pod *corev1.Pod) error {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	return d.writer.SubResource("eviction").Create(ctx, pod, ev)
}
