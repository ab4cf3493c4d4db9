package chaos

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Fault is one kind of fault: Inject breaks something while the workload runs, heals it
// and returns when it healed; the cycle then pauses the workload and measures the
// recovery from that moment.
type Fault struct {
	Kind   string
	Inject func(ctx context.Context, h *Harness, res *FaultResult) (healed time.Time, err error)
	// weight is how often the random phase picks the kind (0: never).
	weight int
}

// The fault kinds, numbered as in the report and docs/RELIABILITY.md.
var (
	KillLeader    = Fault{"1a kill -9 leader", killLeader, 3}
	KillStandby   = Fault{"1b kill -9 standby", killStandby, 2}
	PauseLeader   = Fault{"2 SIGSTOP leader > lease", pauseLeader, 2}
	APIRestart    = Fault{"3 API server restart", apiRestart, 2}
	Compaction410 = Fault{"4 etcd compaction, 410 relist", compaction410, 2}
	Burst         = Fault{"5 burst: expiry + mass delete", burst, 1}
	NodeDelete    = Fault{"6 node deleted with pods, recreated", nodeDelete, 2}
	SlowBind      = Fault{"7 slow bind after assumed TTL", slowBind, 2}
	Partition     = Fault{"8 network partition of one replica", partition, 0}
	SlowWrites    = Fault{"9 slow API server for writes", slowWrites, 0}
	LateDelivery  = Fault{"10 late watch delivery, same-name recreation", lateDelivery, 0}

	// Kinds are the fault kinds in the report's order.
	Kinds = []Fault{KillLeader, KillStandby, PauseLeader, APIRestart, Compaction410, Burst, NodeDelete, SlowBind,
		Partition, SlowWrites, LateDelivery}
	// FirstPass injects every kind once, in this order: the 410 comes first of the API
	// server faults, so that it is measured before client-go's reflector backoff (which
	// doubles with every relist and goes back to its first step only once 2 minutes have
	// passed since it last did: wait.Backoff.DelayWithReset) has built up.
	FirstPass = []Fault{KillLeader, KillStandby, PauseLeader, Compaction410, APIRestart, Burst, NodeDelete, SlowBind,
		Partition, SlowWrites, LateDelivery}
)

// killLeader: kill -9 of the leader under load; the standby takes over; the killed replica
// restarts (a kubelet would) on a paused workload, so that its catch-up compares with the
// cold start.
func killLeader(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	h.scrape(ctx, l)
	res.note("killed", l.Name)
	killed := time.Now()
	if err := l.Kill9(); err != nil {
		return time.Now(), err
	}
	res.killed, res.killedAt = l.Name, killed
	if nl, err := h.waitLeader(ctx, h.Cfg.LeaseDuration+h.Cfg.RecoveryBound); err == nil {
		res.Takeover = time.Since(killed)
		res.note("new leader", nl.Name)
	}
	return h.restart(ctx, l, res)
}

// restart starts a killed replica again on a paused workload (so that its catch-up
// compares with a cold start) and returns when it started it.
func (h *Harness) restart(ctx context.Context, r *Replica, res *FaultResult) (time.Time, error) {
	h.W.Pause()
	healed := time.Now()
	if err := r.Start(); err != nil {
		return healed, err
	}
	if err := r.WaitReady(ctx, h.Cfg.RecoveryBound); err == nil {
		res.note("restarted ready after", since(healed))
	}
	return healed, nil
}

// killStandby: kill -9 of the standby under load, restarted at once.
func killStandby(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	s := h.other(l)
	h.scrape(ctx, s)
	res.note("killed", s.Name)
	if err := s.Kill9(); err != nil {
		return time.Now(), err
	}
	time.Sleep(time.Second) // load while it is gone
	return h.restart(ctx, s, res)
}

// pauseLeader: SIGSTOP of the leader for longer than the lease, under load; the standby
// takes over; SIGCONT. The paused leader must not write once another replica holds the
// lease (checked over the write logs at the end); it exits ("leader election lost") and
// is restarted.
func pauseLeader(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	s := h.other(l)
	h.scrape(ctx, l)
	exits := len(l.Exits())
	res.note("paused", l.Name)
	paused := time.Now()
	if err := l.Pause(); err != nil {
		return time.Now(), err
	}
	res.Takeover = h.awaitTakeover(ctx, s, paused)
	// Stay stopped past the lease, with events arriving for the paused leader to act on.
	if rest := h.Cfg.LeaseDuration + 2*time.Second - time.Since(paused); rest > 0 {
		time.Sleep(rest)
	}
	time.Sleep(time.Second)
	cont := time.Now()
	if err := l.Resume(); err != nil {
		return cont, err
	}
	res.note("stopped for", since(paused))
	h.Results.addHeld(PauseWindow{Replica: l.Name, Stopped: paused, Continued: cont})
	time.Sleep(500 * time.Millisecond) // load while it wakes up
	h.W.Pause()
	poll(15*time.Second, 50*time.Millisecond, func() bool { return len(l.Exits()) > exits })
	if ex := l.Exits(); len(ex) > exits {
		last := ex[len(ex)-1]
		res.note("after SIGCONT", fmt.Sprintf("exited in %v (%s)", last.At.Sub(cont).Round(time.Millisecond), last.Reason))
	} else {
		res.note("after SIGCONT", "kept running")
	}
	return cont, nil
}

// apiRestart: the API server stops under load (watches break, writes fail) and starts
// again; the informers resume or relist.
func apiRestart(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	down := time.Now()
	err := h.Env.RestartAPIServer(ctx, func() error {
		time.Sleep(time.Second)
		return nil
	})
	healed := time.Now()
	res.note("down for", since(down))
	noteCRsServed(ctx, h, res, healed)
	return healed, err
}

// compaction410: with the API server stopped, objects are deleted straight from etcd (no
// watch event will tell), the revision is moved on and etcd is compacted at it, so every
// reflector's resourceVersion is compacted away: the API server (with a new, empty watch
// cache) answers their watches 410 Gone and they relist from scratch.
func compaction410(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	h.W.Pause()
	pods, _, _ := h.W.Intents()
	var victims []string
	for name, p := range pods {
		if p.Class == "plain" && len(victims) < 3 {
			victims = append(victims, name)
		}
	}
	res.relistsBefore = h.Rec.Relists()
	var compacted int64
	err := h.Env.RestartAPIServer(ctx, func() error {
		etcd := h.Env.Etcd()
		for _, name := range victims {
			if _, err := etcd.Delete(ctx, "/registry/pods/"+h.NS+"/"+name); err != nil {
				return err
			}
			h.W.forgetPod(name)
		}
		rev, err := etcd.Put(ctx, "/chaos/bump", time.Now().String())
		if err != nil {
			return err
		}
		compacted = rev
		return etcd.Compact(ctx, compacted)
	})
	healed := time.Now()
	noteCRsServed(ctx, h, res, healed)
	res.note("compacted at revision", fmt.Sprint(compacted))
	res.note("deleted in etcd", fmt.Sprint(len(victims)))
	return healed, err
}

// burst: Config.BurstPods pods are created and Config.BurstReservations reservations set
// to expire in the same second; at that second the pods are deleted at once
// (deletecollection). In the random phase the burst is a tenth of that.
func burst(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	nRsv, nPods := h.Cfg.BurstReservations, h.Cfg.BurstPods
	if res.random {
		nRsv, nPods = max(1, nRsv/10), max(1, nPods/10)
	}
	id := h.W.name("burst")
	nodes := h.W.Nodes()
	if len(nodes) > 10 {
		nodes = nodes[:10]
	}
	start := time.Now()
	if err := harness.Parallel(ctx, nPods, 32, func(ctx context.Context, i int) error {
		return h.W.create(ctx, newPod(h.NS, fmt.Sprintf("%s-p%05d", id, i), nodes[i%len(nodes)], false, LabelBurst, id))
	}); err != nil {
		return time.Now(), err
	}
	podsTook := time.Since(start)
	res.note("pods created in", since(start))
	// Aim at a second every reservation reaches with a TTL of at least 2s, estimating the
	// rate of creation from the pods'.
	rate := 100.0
	if nPods >= 50 {
		rate = float64(nPods) / podsTook.Seconds()
	}
	start = time.Now()
	expiry := start.Add(time.Duration(float64(nRsv)/rate*1.5*float64(time.Second)) + 4*time.Second).Truncate(time.Second)
	if err := harness.Parallel(ctx, nRsv, 32, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("%s-r%05d", id, i)
		ttl := max(1, int64(time.Until(expiry).Seconds()))
		return h.W.createRsv(ctx, RsvIntent{Name: name, Class: "burst", Node: nodes[i%len(nodes)], TTL: ttl}, LabelNobody, name)
	}); err != nil {
		return time.Now(), err
	}
	res.note("reservations created in", since(start))
	res.note("expiry second", expiry.Format("15:04:05"))
	if wait := time.Until(expiry); wait > 0 {
		time.Sleep(wait)
	} else {
		res.note("late", since(expiry))
	}
	// Every pod at once: 64 clients delete concurrently (a deletecollection would be
	// served one pod after another).
	del := time.Now()
	err := harness.Parallel(ctx, nPods, 64, func(ctx context.Context, i int) error {
		p := &corev1.Pod{}
		p.Namespace, p.Name = h.NS, fmt.Sprintf("%s-p%05d", id, i)
		return h.W.deleteNow(ctx, p)
	})
	res.note("pods deleted at once in", since(del))
	h.Results.addBurst(id, expiry, nRsv)
	return time.Now(), err
}

// nodeDelete: a node holding pods, a Reserved reservation, a matched one, its NMNode and
// its CNR is deleted (Node, NMNode, CNR: the pods and reservations stay), and recreated a
// little later.
func nodeDelete(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	nodes := h.W.Nodes()
	node := nodes[h.intn(len(nodes))]
	res.note("node", node)
	// Something held and something matched on it.
	hold := h.W.name("e")
	if err := h.W.createRsv(ctx, RsvIntent{Name: hold, Class: "base", Node: node, TTL: longTTL}, LabelNobody, hold); err != nil {
		return time.Now(), err
	}
	if _, err := h.W.createMatch(ctx, node, "", false); err != nil {
		return time.Now(), err
	}
	time.Sleep(1500 * time.Millisecond) // the matched reservation's pod comes 1.2 s after it
	h.W.SetDown(node, true)
	if err := h.W.DeleteNode(ctx, node); err != nil {
		return time.Now(), err
	}
	time.Sleep(time.Second) // load while the node is gone and its pods are not
	var err error
	poll(30*time.Second, 500*time.Millisecond, func() bool { err = h.W.CreateNode(ctx, node); return err == nil || ctx.Err() != nil })
	h.W.SetDown(node, false)
	return time.Now(), err
}

// slowBind: a reservation and its pod, which the simulated scheduler assumes onto the
// reservation's node and binds only after --pod-assumed-ttl has passed: the assumption
// expires, then the API confirms the pod. The reservation must end Matched by it.
func slowBind(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	a := h.Replicas[0]
	if err := a.WaitReady(ctx, h.Cfg.RecoveryBound); err != nil {
		return time.Now(), err
	}
	nodes := h.W.Nodes()
	node := nodes[h.intn(len(nodes))]
	// Pinned: a random delete of the workload would void the check.
	name, err := h.W.createMatch(ctx, node, h.Cfg.SlowBind.String(), true)
	if err != nil {
		return time.Now(), err
	}
	pod := "t" + name[1:]
	res.note("pod", pod)
	if !poll(h.Cfg.RecoveryBound, 100*time.Millisecond, func() bool {
		p := &corev1.Pod{}
		return h.Env.Client.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: pod}, p) == nil && p.Spec.NodeName != ""
	}) {
		return time.Now(), fmt.Errorf("pod %s was not bound within %v", pod, h.Cfg.RecoveryBound)
	}
	// Whether the assumption expired before the bind is read from the log after the
	// recovery (checkSlowBind): the expiry runs every --period under the cache's lock, so on
	// a loaded machine it can come after the bind.
	res.slowBindRsv, res.slowBound = h.NS+"/"+name, time.Now()
	return res.slowBound, nil
}

// awaitTakeover waits until s leads (within the lease and the recovery bound) and returns
// how long after from that took (0 if it did not).
func (h *Harness) awaitTakeover(ctx context.Context, s *Replica, from time.Time) time.Duration {
	if poll(time.Until(from.Add(h.Cfg.LeaseDuration+h.Cfg.RecoveryBound)), 100*time.Millisecond, func() bool { return s.Leading(ctx) }) {
		return time.Since(from)
	}
	return 0
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

// noteCRsServed notes how long after the API server answered again it served a custom
// resource (Reservations): the API server loads the CRDs after it starts answering, and no
// replica can relist those kinds before.
func noteCRsServed(ctx context.Context, h *Harness, res *FaultResult, healed time.Time) {
	if poll(time.Until(healed.Add(30*time.Second)), 50*time.Millisecond, func() bool {
		return h.Env.Client.List(ctx, &v1alpha1.ReservationList{}, client.Limit(1)) == nil
	}) {
		res.note("custom resources served after", since(healed))
	}
}
