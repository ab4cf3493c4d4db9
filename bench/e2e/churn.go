package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// ChurnStep is one rate of pod churn, in three phases of Duration each: pod creates, then
// label updates, then deletes of the pods just created, each at Rate writes per second.
//
// The phases are not mixed because every pod delete is two API events (the API server
// first writes the deletionTimestamp, a MODIFIED, then removes the pod, even with a grace
// period of 0), which multicache may apply as an update and a delete: mixed with label
// updates, the update counter would no longer tell which writes it has applied.
type ChurnStep struct {
	Rate     float64
	Duration time.Duration
}

// ChurnResult is what one phase of one step measured.
type ChurnResult struct {
	Step ChurnStep
	// Op is the phase's operation (opCreate, opUpdate, opDelete).
	Op int
	// Achieved is the rate the writes were issued at (the writers may fall behind).
	Achieved float64
	// Writes succeeded; Errors failed (not counted in the lags).
	Writes, Errors int
	// Lag is from an API write returning to multicache counting its event as applied.
	// InformerLag is the bare informer's (cmd/informer, its own process) read exactly as
	// multicache's is: its pod event counters read every Poll.
	Lag, InformerLag Quantiles
	// InformerMissing writes the bare informer never showed (within the drain timeout).
	InformerMissing int
	// WorstAt is when the write with the largest lag was answered, from multicache's start
	// (to tell periodic work, e.g. the verify loop every --verify-period, from load).
	WorstAt time.Duration
	// Write is how long the API writes took (request to answer).
	Write Quantiles
	// Drain is from the last write's answer until multicache had applied every write.
	Drain time.Duration
	// Missing writes multicache never showed (within the drain timeout).
	Missing int
	// Applied is how many pod events of the phase's operation multicache applied from its
	// start to the end of its drain: as many as the writes.
	Applied int
	// Rejected pod events during the phase (should be 0).
	Rejected int
	// CPU is multicache's CPU time during the phase and its drain (Elapsed), reading of
	// its counters included (ChurnReport.PolledCPU when idle: too large and too noisy to
	// subtract).
	CPU, Elapsed time.Duration
	// KeptUp: nothing missing, rejected or failed, drained within a second, p99 under a
	// second.
	KeptUp bool
}

// write is one churn write's outcome.
type write struct {
	key              string
	issued, returned time.Time
	err              error
}

// churner issues churn writes: creates of new pods (churn-NNNNNNN, owned by ReplicaSet 1,
// bound round-robin), label updates of the populated pods (round-robin) and deletes of the
// pods it created.
type churner struct {
	c     client.Client
	size  Size
	rsUID types.UID
	// created is the index of the next churn pod; updated of the next populated pod.
	created, updated int
}

// churnPod is the i-th pod the churn creates, of the population's shape: with realistic
// pods, the spec the ReplicaSet controller writes (the kubelet's status comes later in a
// real cluster, and the churn measures one write per pod).
func (ch *churner) churnPod(i int) *corev1.Pod {
	slot, node := i%PodsPerReplicaSet, NodeName(i%ch.size.Nodes)
	var p *corev1.Pod
	if ch.size.RealisticPods {
		p = MakeRealisticPod(1, slot, ch.rsUID, node)
		p.GenerateName = ""
	} else {
		p = MakePod(1, slot, ch.rsUID, node)
	}
	p.Name = fmt.Sprintf("churn-%07d", i)
	return p
}

// populatedPod returns the key of populated pod j.
func populatedPod(j int) types.NamespacedName {
	r := j / PodsPerReplicaSet
	return types.NamespacedName{Namespace: ReplicaSetNamespace(r), Name: fmt.Sprintf("%s-%d", ReplicaSetName(r), j%PodsPerReplicaSet)}
}

// writeFunc performs the k-th write of a phase and returns the key of the pod it wrote.
type writeFunc func(ctx context.Context, k int) (string, error)

// phase returns the writes of op for a phase of n writes: creates of n new pods, label
// updates of the next n populated pods, deletes of the pods in toDelete.
func (ch *churner) phase(op int, n int, toDelete []string) writeFunc {
	switch op {
	case opCreate:
		first := ch.created
		ch.created += n
		return func(ctx context.Context, k int) (string, error) {
			p := ch.churnPod(first + k)
			return p.Namespace + "/" + p.Name, ch.c.Create(ctx, p, client.FieldOwner(ControllerFieldManager))
		}
	case opUpdate:
		first := ch.updated
		ch.updated += n
		return func(ctx context.Context, k int) (string, error) {
			key := populatedPod((first + k) % ch.size.Pods)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"%d"}}}`, labelChurn, first+k)
			return key.String(), ch.c.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch))
		}
	default:
		return func(ctx context.Context, k int) (string, error) {
			key := toDelete[k]
			ns, name, _ := strings.Cut(key, "/")
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			// No kubelet confirms a graceful deletion: delete at once.
			return key, ch.c.Delete(ctx, p, client.GracePeriodSeconds(0))
		}
	}
}

// issue performs n writes at rate per second, paced from one goroutine and performed by
// workers writers. When every writer is busy the pacer waits, so the achieved rate can be
// lower than asked (it is reported). The writes are returned in the order they returned.
func issue(ctx context.Context, n int, rate float64, workers int, do writeFunc) []write {
	var (
		mu     sync.Mutex
		writes []write
		wg     sync.WaitGroup
	)
	jobs := make(chan int)
	for range workers {
		wg.Go(func() {
			for k := range jobs {
				w := write{issued: time.Now()}
				w.key, w.err = do(ctx, k)
				w.returned = time.Now()
				mu.Lock()
				writes = append(writes, w)
				mu.Unlock()
			}
		})
	}
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for k := range n {
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(time.Duration(k) * interval))):
		}
		if ctx.Err() != nil {
			break
		}
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	slices.SortFunc(writes, func(a, b write) int { return a.returned.Compare(b.returned) })
	return writes
}

// Churn measures multicache under pod churn.
type Churn struct {
	Steps []ChurnStep
	// Workers issue the writes of a phase.
	Workers int
	// Poll is how often multicache's event counters are read (the lag's resolution).
	Poll time.Duration
	// DrainTimeout bounds the wait for multicache to apply a phase's writes.
	DrainTimeout time.Duration
	// Pause between phases.
	Pause time.Duration
	// OverheadWindow is how long multicache's CPU is read idle, then again with the poller
	// running (ChurnReport.IdleCPU, PolledCPU); 0 means 5 s.
	OverheadWindow time.Duration
}

// ChurnReport is the churn's phases and what reading multicache's counters costs it.
type ChurnReport struct {
	Phases []ChurnResult
	// DuringDump is one more phase of label updates, at the first step's rate, while
	// /debug/cache is read back to back (Dumps): whether events keep being applied while the
	// dump is written.
	DuringDump *ChurnResult
	Dumps      []EndpointCost
	// ScrapeBytes is the size of what is read of multicache's /metrics every Poll during
	// the churn (multicache_events_total only).
	ScrapeBytes int
	// IdleCPU and PolledCPU are multicache's CPU use (cores) with no churn, without and
	// with the poller: the difference is what the measurement costs it.
	IdleCPU, PolledCPU float64
}

// cpuOver returns the CPU (in cores) pid uses over d.
func cpuOver(pid int, d time.Duration) (float64, error) {
	c0, err := ReadCPU(pid)
	if err != nil {
		return 0, err
	}
	time.Sleep(d)
	c1, err := ReadCPU(pid)
	return (c1 - c0).Seconds() / d.Seconds(), err
}

// Run drives the steps against the multicache instance mc, three phases each, then calls
// settled (multicache's memory is read there), then runs the phase during which the dump is
// read back to back. inf is a bare informer (InformerSubject) running alongside, whose lag
// is read the same way as multicache's in every phase.
func (c Churn) Run(ctx context.Context, cl *harness.Cluster, size Size, rsUID types.UID, mc, inf *Instance, log io.Writer,
	settled func() error) (*ChurnReport, error) {
	ch := &churner{c: cl.Client, size: size, rsUID: rsUID}
	rep := &ChurnReport{}
	body, err := harness.Get(ctx, harness.FilterURL(mc.MetricsURL, "multicache_events_total"), harness.RequestTimeout)
	if err != nil {
		return rep, err
	}
	rep.ScrapeBytes = len(body)
	overheadWindow := c.OverheadWindow
	if overheadWindow <= 0 {
		overheadWindow = 5 * time.Second
	}
	if rep.IdleCPU, err = cpuOver(mc.Pid(), overheadWindow); err != nil {
		return rep, err
	}
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	pollers := lagPollers{mc: &eventPoller{url: mc.MetricsURL, family: multicacheEvents, interval: c.Poll}}
	go pollers.mc.run(pollCtx)
	if rep.PolledCPU, err = cpuOver(mc.Pid(), overheadWindow); err != nil {
		return rep, err
	}
	pollers.inf = &eventPoller{url: inf.MetricsURL, family: informerEvents, interval: c.Poll}
	go pollers.inf.run(pollCtx)
	fmt.Fprintf(log, "  multicache idle: %.3f cores; reading its event counters (%d bytes) every %v: %.3f cores\n",
		rep.IdleCPU, rep.ScrapeBytes, c.Poll, rep.PolledCPU)

	for _, step := range c.Steps {
		n := int(step.Rate * step.Duration.Seconds())
		var created []string
		for op := range numOps {
			time.Sleep(c.Pause)
			do := ch.phase(op, n, created)
			count := n
			if op == opDelete {
				count = len(created)
			}
			r, writes, err := c.runPhase(ctx, step, op, count, do, pollers, mc)
			if err != nil {
				return rep, err
			}
			if op == opCreate {
				for _, w := range writes {
					if w.err == nil {
						created = append(created, w.key)
					}
				}
			}
			fmt.Fprintf(log, "  churn %4.0f/s %-12s achieved %4.0f/s, %5d writes (%d failed), applied %5d, lag p50 %v p99 %v max %v (informer read alike p50 %v p99 %v), drain %v, missing %d, kept up %v\n",
				step.Rate, opNames[op], r.Achieved, r.Writes, r.Errors, r.Applied, ms(r.Lag.P50), ms(r.Lag.P99), ms(r.Lag.Max),
				ms(r.InformerLag.P50), ms(r.InformerLag.P99), ms(r.Drain), r.Missing, r.KeptUp)
			fmt.Fprintf(log, "    worst lag at +%.1fs after multicache started\n", r.WorstAt.Seconds())
			rep.Phases = append(rep.Phases, r)
		}
	}
	if err := settled(); err != nil {
		return rep, err
	}
	if len(c.Steps) > 0 {
		if err := c.duringDump(ctx, ch, c.Steps[0], pollers, mc, rep, log); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// duringDump runs a phase of label updates while /debug/cache is read back to back.
func (c Churn) duringDump(ctx context.Context, ch *churner, step ChurnStep, pollers lagPollers, mc *Instance,
	rep *ChurnReport, log io.Writer) error {
	time.Sleep(c.Pause)
	dumpCtx, stopDumps := context.WithCancel(ctx)
	dumps := make(chan []EndpointCost, 1)
	go func() { dumps <- dumpsDuring(dumpCtx, mc, log) }()
	n := int(step.Rate * step.Duration.Seconds())
	r, _, err := c.runPhase(ctx, step, opUpdate, n, ch.phase(opUpdate, n, nil), pollers, mc)
	stopDumps()
	rep.Dumps = <-dumps
	if err != nil {
		return err
	}
	rep.DuringDump = &r
	fmt.Fprintf(log, "  churn %4.0f/s label update while /debug/cache is read back to back (%d dumps): lag p50 %v p99 %v max %v (informer read alike p99 %v), kept up %v\n",
		step.Rate, len(rep.Dumps), ms(r.Lag.P50), ms(r.Lag.P99), ms(r.Lag.Max), ms(r.InformerLag.P99), r.KeptUp)
	if len(rep.Dumps) > 0 {
		logEndpoint(log, slices.MaxFunc(rep.Dumps, func(a, b EndpointCost) int { return cmp.Compare(a.Took, b.Took) }))
	}
	return nil
}

// lagPollers read the pod event counters of multicache and of the bare informer alongside.
type lagPollers struct{ mc, inf *eventPoller }

// runPhase issues one phase's writes, waits until multicache and the bare informer have
// applied them (or DrainTimeout passes) and computes the lags.
func (c Churn) runPhase(ctx context.Context, step ChurnStep, op, n int, do writeFunc, pollers lagPollers,
	mc *Instance) (ChurnResult, []write, error) {
	poller := pollers.mc
	base, err := poller.waitLast(ctx, time.Now(), c.DrainTimeout)
	if err != nil {
		return ChurnResult{}, nil, err
	}
	infBase, err := pollers.inf.waitLast(ctx, time.Now(), c.DrainTimeout)
	if err != nil {
		return ChurnResult{}, nil, err
	}
	cpu0, err := ReadCPU(mc.Pid())
	if err != nil {
		return ChurnResult{}, nil, err
	}
	t0 := time.Now()
	writes := issue(ctx, n, step.Rate, c.Workers, do)
	r := ChurnResult{Step: step, Op: op}
	var returns []time.Time
	for _, w := range writes {
		if w.err == nil {
			returns = append(returns, w.returned)
		}
	}
	want := float64(len(returns))
	deadline := time.Now().Add(c.DrainTimeout)
	for {
		s, _ := poller.last()
		si, _ := pollers.inf.last()
		if s.applied[op]-base.applied[op] >= want && si.applied[op]-infBase.applied[op] >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(c.Poll)
	}
	time.Sleep(2 * c.Poll) // a sample after the last event
	samples := poller.since(base.at)
	lags, missing := matchLags(returns, samples, op, base.applied[op])
	r.Lag, r.Missing = quantiles(lags), missing
	infLags, infMissing := matchLags(returns, pollers.inf.since(infBase.at), op, infBase.applied[op])
	r.InformerLag, r.InformerMissing = quantiles(infLags), infMissing
	if i := slices.Index(lags, r.Lag.Max); i >= 0 && r.Lag.N > 0 {
		r.WorstAt = returns[i].Sub(mc.Started)
	}
	if len(samples) > 0 {
		end := samples[len(samples)-1]
		r.Applied = int(end.applied[op] - base.applied[op])
		r.Rejected = int(end.rejected - base.rejected)
	}
	if missing == 0 && len(returns) > 0 {
		j := slices.IndexFunc(samples, func(s eventSample) bool { return s.applied[op]-base.applied[op] >= want })
		r.Drain = max(0, samples[j].at.Sub(returns[len(returns)-1]))
	}
	summarise(&r, writes)
	cpu1, err := ReadCPU(mc.Pid())
	if err != nil {
		return ChurnResult{}, nil, err
	}
	r.CPU, r.Elapsed = cpu1-cpu0, time.Since(t0)
	r.KeptUp = r.Missing == 0 && r.Rejected == 0 && r.Errors == 0 && r.Drain < time.Second && r.Lag.P99 < time.Second
	return r, writes, nil
}

// summarise counts the writes and computes their API latency and achieved rate.
func summarise(r *ChurnResult, writes []write) {
	var apiLat []time.Duration
	var first, last time.Time
	for _, w := range writes {
		if w.err != nil {
			r.Errors++
			continue
		}
		r.Writes++
		apiLat = append(apiLat, w.returned.Sub(w.issued))
		if first.IsZero() || w.issued.Before(first) {
			first = w.issued
		}
		if w.issued.After(last) {
			last = w.issued
		}
	}
	if r.Writes > 1 {
		// n writes issued over [first, last] span n-1 intervals.
		r.Achieved = float64(r.Writes-1) / last.Sub(first).Seconds()
	}
	r.Write = quantiles(apiLat)
}

// ms rounds a duration for the log.
func ms(d time.Duration) time.Duration { return d.Round(100 * time.Microsecond) }
