package chaos

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Workload keeps a cluster busy: it creates, updates, binds and deletes pods, reservations,
// pod groups, nodes and the node agents' objects at Config.Rate, and remembers what it
// meant by each object (its intent), which is what the final checks hold the operators'
// status to. Pause stops it between operations (the recovery measurements run on a quiet
// cluster); Resume lets it go on.
type Workload struct {
	c    client.Client
	cs   kubernetes.Interface
	ns   string
	cfg  Config
	rec  *Recorder
	logf func(string, ...any)

	// gate: operations hold it shared, Pause holds it exclusively.
	gate     sync.RWMutex
	paused   atomic.Bool
	noRandom atomic.Bool
	// running counts follow-up steps in flight (taken off steps, not finished).
	running atomic.Int64
	seq     atomic.Int64

	rngMu sync.Mutex
	rng   *rand.Rand

	mu    sync.Mutex
	nodes []string
	extra map[string]bool
	// deleted are the extra nodes deleted (names are never reused).
	deleted map[string]bool
	down    map[string]bool
	pods    map[string]*PodIntent
	rsvs    map[string]*RsvIntent
	groups  map[string]*GroupIntent
	steps   []*step
	stats   map[string]*OpStat
}

// PodIntent is what the workload meant by a pod.
type PodIntent struct {
	Name  string
	Class string // plain, bind, sched, target, member, burst
	Node  string // where it was put or is to go ("" for the scheduler's choice)
	// Rsv is the reservation a target pod is for.
	Rsv string
}

// RsvIntent is what the workload meant by a reservation.
type RsvIntent struct {
	Name    string
	Class   string // base, expire, match, pending, contend, burst
	Node    string
	TTL     int64
	Created time.Time
	// Target is the pod a "match" or "contend" reservation waits for (set once created).
	Target string
	// Peer is the other reservation of a contended pair.
	Peer    string
	Deleted bool
	// Abandoned: a step it needed never succeeded (its expectation is void).
	Abandoned bool
	// Pinned: a fault checks this reservation; the workload's random deletes leave it.
	Pinned bool
	// NodeDeleted: the workload deleted its node (an extra node).
	NodeDeleted bool
}

// GroupIntent is what the workload meant by a pod group.
type GroupIntent struct {
	Name      string
	Class     string // runs, starves
	MinMember int32
	Timeout   int32
	Created   time.Time
	Members   []string
	Deleted   bool
	Abandoned bool
}

// OpStat counts one kind of operation.
type OpStat struct{ OK, Failed int }

type step struct {
	due, deadline time.Time
	name          string
	do            func(context.Context) error
	abandon       func()
}

// NewWorkload returns a workload in namespace ns.
func NewWorkload(c client.Client, cs kubernetes.Interface, ns string, cfg Config, rec *Recorder, logf func(string, ...any)) *Workload {
	return &Workload{
		c: c, cs: cs, ns: ns, cfg: cfg, rec: rec, logf: logf,
		rng:   rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		extra: map[string]bool{}, deleted: map[string]bool{}, down: map[string]bool{},
		pods: map[string]*PodIntent{}, rsvs: map[string]*RsvIntent{}, groups: map[string]*GroupIntent{},
		stats: map[string]*OpStat{},
	}
}

func (w *Workload) intn(n int) int {
	w.rngMu.Lock()
	defer w.rngMu.Unlock()
	return w.rng.IntN(n)
}

func (w *Workload) float() float64 {
	w.rngMu.Lock()
	defer w.rngMu.Unlock()
	return w.rng.Float64()
}

func (w *Workload) name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, w.seq.Add(1)) }

// count records the outcome of one operation.
func (w *Workload) count(op string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats[op]
	if s == nil {
		s = &OpStat{}
		w.stats[op] = s
	}
	if err == nil {
		s.OK++
	} else {
		s.Failed++
	}
}

// Stats returns the operations done so far by name.
func (w *Workload) Stats() map[string]OpStat {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]OpStat{}
	for k, v := range w.stats {
		out[k] = *v
	}
	return out
}

// Pause waits for the operations in flight and holds the next ones until Resume.
func (w *Workload) Pause() {
	if w.paused.Swap(true) {
		return
	}
	w.gate.Lock()
}

// StopRandom stops the random operations for good; follow-up steps still run.
func (w *Workload) StopRandom() { w.noRandom.Store(true) }

// Resume lets the workload go on.
func (w *Workload) Resume() {
	if !w.paused.Swap(false) {
		return
	}
	w.gate.Unlock()
}

// Run drives the workload until ctx ends: Workers goroutines share Rate operations a
// second, and a loop runs the follow-up steps when they are due.
func (w *Workload) Run(ctx context.Context) {
	tokens := make(chan struct{})
	var wg sync.WaitGroup
	for range w.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range tokens {
				if w.noRandom.Load() {
					continue
				}
				w.gate.RLock()
				octx, cancel := context.WithTimeout(ctx, 5*time.Second)
				w.randomOp(octx)
				cancel()
				w.gate.RUnlock()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.runSteps(ctx)
	}()
	interval := time.Duration(float64(time.Second) / w.cfg.Rate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			select {
			case tokens <- struct{}{}:
			default: // every worker busy (the API is down): skip this beat
			}
		}
	}
	close(tokens)
	wg.Wait()
}

// after schedules a follow-up operation; it is retried every second until deadline.
func (w *Workload) after(d time.Duration, name string, do func(context.Context) error, abandon func()) {
	now := time.Now()
	w.mu.Lock()
	w.steps = append(w.steps, &step{due: now.Add(d), deadline: now.Add(d + 90*time.Second), name: name, do: do, abandon: abandon})
	w.mu.Unlock()
}

// PendingSteps is the number of follow-up operations not done yet (in flight included).
func (w *Workload) PendingSteps() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.steps) + int(w.running.Load())
}

// takeDue takes the steps due at now off the queue and counts them running (under one
// hold of the lock: PendingSteps sees each step queued or running); the caller counts
// each one down when it is done or queued again.
func (w *Workload) takeDue(now time.Time) []*step {
	w.mu.Lock()
	defer w.mu.Unlock()
	var due, later []*step
	for _, s := range w.steps {
		if !s.due.After(now) {
			due = append(due, s)
		} else {
			later = append(later, s)
		}
	}
	w.running.Add(int64(len(due)))
	w.steps = later
	return due
}

func (w *Workload) runSteps(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	sem := make(chan struct{}, w.cfg.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, s := range w.takeDue(time.Now()) {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				w.runStep(ctx, s)
			})
		}
	}
}

// runStep runs a step taken off the queue (takeDue): one that fails is queued again a
// second later, or given up once past its deadline.
func (w *Workload) runStep(ctx context.Context, s *step) {
	defer w.running.Add(-1)
	w.gate.RLock()
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := s.do(octx)
	cancel()
	w.gate.RUnlock()
	w.count(s.name, err)
	if err == nil {
		return
	}
	if time.Now().After(s.deadline) {
		w.logf("workload: giving up %s: %v", s.name, err)
		if s.abandon != nil {
			s.abandon()
		}
		return
	}
	s.due = time.Now().Add(time.Second)
	w.mu.Lock()
	w.steps = append(w.steps, s)
	w.mu.Unlock()
}

// liveNodes are the nodes operations may use: base and extra nodes not taken down.
func (w *Workload) liveNodes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.nodes)+len(w.extra))
	for _, n := range w.nodes {
		if !w.down[n] {
			out = append(out, n)
		}
	}
	// Sorted: map order would make the seed's choices irreproducible.
	return append(out, slices.Sorted(maps.Keys(w.extra))...)
}

func (w *Workload) randomNode() string {
	nodes := w.liveNodes()
	return nodes[w.intn(len(nodes))]
}

// Nodes returns the base nodes.
func (w *Workload) Nodes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.nodes...)
}

// SetDown marks a node as taken down by a fault (no operation uses it) or back up.
func (w *Workload) SetDown(node string, down bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if down {
		w.down[node] = true
	} else {
		delete(w.down, node)
	}
}

// Intents returns copies of the intents.
func (w *Workload) Intents() (map[string]PodIntent, map[string]RsvIntent, map[string]GroupIntent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pods, rsvs, groups := map[string]PodIntent{}, map[string]RsvIntent{}, map[string]GroupIntent{}
	for k, v := range w.pods {
		pods[k] = *v
	}
	for k, v := range w.rsvs {
		rsvs[k] = *v
	}
	for k, v := range w.groups {
		c := *v
		c.Members = append([]string(nil), v.Members...)
		groups[k] = c
	}
	return pods, rsvs, groups
}

// create creates obj, treating "already exists" as done (a retry after a lost answer).
func (w *Workload) create(ctx context.Context, obj client.Object) error {
	return harness.Create(ctx, w.c, obj)
}

// bind binds a pod through the binding subresource (a scheduler's write).
func (w *Workload) bind(ctx context.Context, name, node string) error {
	pod, err := w.cs.CoreV1().Pods(w.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: nothing to bind
	}
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != "" {
		return nil // bound already (an earlier try whose answer was lost)
	}
	err = w.cs.CoreV1().Pods(w.ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// deleteNow deletes obj at once, treating "not found" as done.
func (w *Workload) deleteNow(ctx context.Context, obj client.Object) error {
	return client.IgnoreNotFound(w.c.Delete(ctx, obj, client.GracePeriodSeconds(0)))
}

// patchStatus merge-patches obj's status with fn's changes.
func (w *Workload) patchStatus(ctx context.Context, obj client.Object, fn func()) error {
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	base := obj.DeepCopyObject().(client.Object)
	fn()
	return w.c.Status().Patch(ctx, obj, client.MergeFrom(base))
}

// forgetPod drops a pod from the intents (deleted behind the API's back).
func (w *Workload) forgetPod(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, name)
}
