package chaos

import (
	"context"
	"fmt"
	"time"
)

// The faults of the path between a replica and the API server, injected through the
// replica's proxy (apiproxy).

// partition cuts one replica from the API server under load, with its writes in flight,
// for longer than the lease: the leader in the first pass (the standby takes over; the cut
// leader cannot renew, stops at its renew deadline and is restarted into the partition),
// either replica in the random phase. Requests already forwarded are taken by the API
// server, their answers held. Then the path heals.
func partition(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	victim := l
	if res.random && h.intn(2) == 1 {
		victim = h.other(l)
	}
	h.scrape(ctx, victim)
	res.note("partitioned", fmt.Sprintf("%s (leader %s)", victim.Name, l.Name))
	cut := time.Now()
	victim.Proxy.Partition()
	if victim == l {
		res.Takeover = h.awaitTakeover(ctx, h.other(l), cut)
	}
	if rest := h.Cfg.LeaseDuration + 2*time.Second - time.Since(cut); rest > 0 {
		time.Sleep(rest)
	}
	healed := time.Now()
	victim.Proxy.Heal()
	res.note("cut for", since(cut))
	h.Results.addHeld(PauseWindow{Replica: victim.Name, Stopped: cut, Continued: healed})
	time.Sleep(500 * time.Millisecond) // load while it reconnects
	h.W.Pause()
	return healed, nil
}

// slowWrites delays every write of the leader but its lease renewals (priority and
// fairness keeps leader election apart) by two thirds of the renew deadline, under load,
// as an API server's queues do under load: writes arrive late, some past the deadline the
// fence gave them, which the operator must cancel rather than send late.
func slowWrites(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	d := h.Cfg.RenewDeadline * 2 / 3
	res.note("writes delayed", fmt.Sprintf("%v, of %s", d, l.Name))
	l.Proxy.SlowWrites(d)
	time.Sleep(3 * d)
	l.Proxy.SlowWrites(0)
	time.Sleep(d) // the writes already waiting go through
	h.W.Pause()
	return time.Now(), nil
}

// lateDelivery holds back what the watches of one replica carry (the standby in the first
// pass, either in the random phase) while the pods of a StatefulSet are deleted and
// recreated under the same names (new UIDs, each through a hold and its replacement
// Reservation), several times each: the replica learns of every delete and create late,
// after the cluster moved on. Then delivery is on time again.
func lateDelivery(ctx context.Context, h *Harness, res *FaultResult) (time.Time, error) {
	l, err := h.waitLeader(ctx, h.Cfg.RecoveryBound)
	if err != nil {
		return time.Now(), err
	}
	victim := h.other(l)
	if res.random && h.intn(2) == 1 {
		victim = l
	}
	nodes := h.W.Nodes()
	set, err := h.W.newStatefulSet(ctx, 4, []string{nodes[h.intn(len(nodes))], nodes[h.intn(len(nodes))]})
	if err != nil {
		return time.Now(), err
	}
	time.Sleep(time.Second) // its pods settle on both replicas
	d := 2 * time.Second
	res.note("watches late", fmt.Sprintf("%v, of %s; statefulset %s", d, victim.Name, set.name))
	victim.Proxy.LateWatches(d)
	recreated := 0
	for range 3 {
		for i := range len(set.nodes) {
			if err := h.W.recreate(ctx, set, i); err != nil {
				victim.Proxy.LateWatches(0)
				return time.Now(), err
			}
			recreated++
		}
		time.Sleep(d / 2)
	}
	victim.Proxy.LateWatches(0)
	time.Sleep(d) // what was held back arrives
	res.note("pods recreated under the same name", fmt.Sprint(recreated))
	h.W.Pause()
	return time.Now(), nil
}
