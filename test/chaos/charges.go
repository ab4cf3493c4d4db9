package chaos

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// chargeSettleTries is how many times in a row a replica that has seen every status the
// API lists must show the same wrong charges before they count: a dump is copied a part at
// a time, so one taken while a last event lands can still be torn.
const chargeSettleTries = 3

// checkCharges: on every replica, each node is charged exactly its pods on the API (plus
// the ones the cache holds assumed there) and the placeholders of its Reserved
// reservations; every placeholder belongs to a Reserved reservation that exists.
//
// A dump copies the reservations before the nodes, each under a hold of its own: while a
// replica still ends reservations (the leader expiring a burst, a standby applying the
// thousands of Expired statuses the leader writes over a minute or more) a dump shows
// reservations Reserved whose placeholders its nodes released a moment later. So wrong
// charges count only on a replica that has settled: a standby that shows every reservation
// status the API lists, and a replica whose reservations' phases did not change since its
// previous dump. The check waits for that up to the recovery bound and notes how long each
// replica took.
func (h *Harness) checkCharges(ctx context.Context, res *FaultResult) {
	c := &chargeCheck{start: time.Now(), settledAt: map[string]string{}, phases: map[string]map[string]string{}}
	var problems []string
	settled := 0
	for {
		problems = nil
		unsettled, err := h.chargeRound(ctx, c, &problems)
		if err != nil {
			problems = append(problems, err.Error())
		}
		if len(problems) == 0 {
			h.Results.observe("charge checks", 1)
			break
		}
		if unsettled == "" {
			settled++
		}
		if settled >= chargeSettleTries || time.Since(c.start) > h.Cfg.RecoveryBound {
			sort.Strings(problems)
			wrong := fmt.Sprintf("%d nodes charged wrongly, e.g. %s", len(problems), strings.Join(problems[:min(5, len(problems))], "; "))
			if unsettled != "" {
				res.violation("charge", "%s; meanwhile %s", unsettled, wrong)
			} else {
				res.violation("charge", "%s", wrong)
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, r := range h.Replicas {
		if l := c.settledAt[r.Name]; l != "" && l != "0s" {
			res.note("replica "+r.Name+" settled for the charge check after", l)
		}
	}
}

// chargeCheck is what the rounds of one checkCharges carry over.
type chargeCheck struct {
	start time.Time
	// settledAt: per replica, from the start to the first round it was settled in.
	settledAt map[string]string
	// phases: per replica, its reservations' phases in the previous round's dump.
	phases map[string]map[string]string
}

// chargeRound lists the API's pods and reservations, dumps every replica and appends the
// charge problems of each to problems. unsettled says which replica is still ending
// reservations ("" when none is).
func (h *Harness) chargeRound(ctx context.Context, c *chargeCheck, problems *[]string) (unsettled string, err error) {
	roundStart := time.Now()
	var pods corev1.PodList
	if err := h.Env.Client.List(ctx, &pods, client.InNamespace(h.NS)); err != nil {
		return "", err
	}
	var rsvs v1alpha1.ReservationList
	if err := h.Env.Client.List(ctx, &rsvs, client.InNamespace(h.NS)); err != nil {
		return "", err
	}
	inAPI := map[string]bool{}
	for _, r := range rsvs.Items {
		inAPI[r.Namespace+"/"+r.Name] = true
	}
	for _, r := range h.Replicas {
		d, err := r.Dump(ctx)
		if err != nil {
			*problems = append(*problems, fmt.Sprintf("%s: %v", r.Name, err))
			continue
		}
		why := ""
		phases := map[string]string{}
		for key, rd := range d.Reservations {
			phases[key] = rd.Phase
		}
		prev, seen := c.phases[r.Name]
		c.phases[r.Name] = phases
		if !seen || !maps.Equal(prev, phases) {
			why = fmt.Sprintf("replica %s changed reservations' phases between its last two dumps (%s after the check began)", r.Name, since(c.start))
		}
		// Only a standby follows the statuses; the leader's writer may lag its cache.
		if b := statusesBehind(d, rsvs.Items); len(b) > 0 && !r.Leading(ctx) {
			sort.Strings(b)
			why = fmt.Sprintf("replica %s has not seen %d reservation statuses the API lists after %s, e.g. %s",
				r.Name, len(b), since(c.start), strings.Join(b[:min(3, len(b))], ", "))
		}
		if why != "" {
			if unsettled == "" {
				unsettled = why
			}
		} else if _, ok := c.settledAt[r.Name]; !ok {
			// From the start of the check to the start of the first round it was settled
			// in (a round itself takes a list and a dump).
			c.settledAt[r.Name] = roundStart.Sub(c.start).Round(time.Millisecond).String()
		}
		for _, p := range chargeProblems(d, pods.Items, inAPI) {
			*problems = append(*problems, r.Name+": "+p)
		}
	}
	return unsettled, nil
}

// statusesBehind lists the reservations whose status in the API the dump does not show
// (the same rule as statusProblems: Matched shows as Reserved while its owner is assumed).
func statusesBehind(d *Dump, rsvs []v1alpha1.Reservation) []string {
	var out []string
	for _, r := range rsvs {
		if r.Status.Phase == "" {
			continue
		}
		key := r.Namespace + "/" + r.Name
		c, ok := d.Reservations[key]
		if !ok {
			out = append(out, key+" (not in the cache)")
			continue
		}
		if statusOf(d, c) != string(r.Status.Phase) {
			out = append(out, fmt.Sprintf("%s (API %s, cache %s)", key, r.Status.Phase, c.Phase))
		}
	}
	return out
}

// statusOf is the status phase a reservation of the dump is written with: its phase, but
// Reserved while a Matched one's owner is only assumed.
func statusOf(d *Dump, c ReservationDump) string {
	if c.Phase == string(v1alpha1.ReservationMatched) && d.Pods[c.Owner].State == "Assumed" {
		return string(v1alpha1.ReservationReserved)
	}
	return c.Phase
}

type charge struct{ cpu, mem, beCPU, beMem int64 }

// chargeProblems compares one dump's node charges with the API's pods and the dump's own
// Reserved reservations. A wrong node lists what the two sides do not share: pods on the
// API the node does not hold, and Reserved reservations whose placeholder it does not hold.
func chargeProblems(d *Dump, pods []corev1.Pod, rsvInAPI map[string]bool) []string {
	want := map[string]*charge{}
	at := func(node string) *charge {
		c := want[node]
		if c == nil {
			c = &charge{}
			want[node] = c
		}
		return c
	}
	podsOn := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		key := p.Namespace + "/" + p.Name
		node := p.Spec.NodeName
		if pd, ok := d.Pods[key]; ok && pd.State == "Assumed" {
			node = pd.Node
		}
		if node == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		podsOn[node] = append(podsOn[node], key)
		cpu, mem := podRequests(p)
		c := at(node)
		if p.Annotations[v1alpha1.ResourceTypeAnnotation] == string(v1alpha1.ResourceTypeBestEffort) {
			c.beCPU += cpu
			c.beMem += mem
		} else {
			c.cpu += cpu
			c.mem += mem
		}
	}
	placeholders := map[string]map[string]bool{}
	for key, r := range d.Reservations {
		if r.Phase != string(v1alpha1.ReservationReserved) {
			continue
		}
		cpu, mem := quantities(r.Resources)
		c := at(r.Node)
		c.cpu += cpu
		c.mem += mem
		if placeholders[r.Node] == nil {
			placeholders[r.Node] = map[string]bool{}
		}
		placeholders[r.Node][key] = true
	}
	var problems []string
	for name, n := range d.Nodes {
		cpu, mem := quantities(n.Requested)
		beCPU, beMem := quantities(n.BestEffortRequested)
		w := want[name]
		if w == nil {
			w = &charge{}
		}
		if cpu != w.cpu || mem != w.mem || beCPU != w.beCPU || beMem != w.beMem {
			problems = append(problems, fmt.Sprintf("node %s charged cpu %dm mem %d (best-effort %dm/%d), its pods and Reserved placeholders make %dm/%d (%dm/%d)%s",
				name, cpu, mem, beCPU, beMem, w.cpu, w.mem, w.beCPU, w.beMem, unshared(n, podsOn[name], placeholders[name])))
		}
		for _, key := range n.Reservations {
			if !placeholders[name][key] {
				problems = append(problems, fmt.Sprintf("node %s holds a placeholder of %s, which is %s in the same dump", name, key, d.Reservations[key].Phase))
			}
			if !rsvInAPI[key] {
				problems = append(problems, fmt.Sprintf("node %s holds a placeholder of %s, which is not in the API (leaked)", name, key))
			}
		}
		delete(want, name)
	}
	for name, w := range want {
		if *w != (charge{}) {
			problems = append(problems, fmt.Sprintf("node %s is not in the cache, but its pods and placeholders make %dm/%d", name, w.cpu, w.mem))
		}
	}
	return problems
}

// unshared says which of the API's pods on a node and the dump's Reserved placeholders on
// it the node does not hold (up to three of each), or "".
func unshared(n NodeDump, apiPods []string, reserved map[string]bool) string {
	has := func(list []string) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, k := range list {
			m[k] = true
		}
		return m
	}
	held, holds := has(n.Pods), has(n.Reservations)
	var pods, rsvs []string
	for _, k := range apiPods {
		if !held[k] {
			pods = append(pods, k)
		}
	}
	for k := range reserved {
		if !holds[k] {
			rsvs = append(rsvs, k)
		}
	}
	if len(pods) == 0 && len(rsvs) == 0 {
		return ""
	}
	sort.Strings(pods)
	sort.Strings(rsvs)
	return fmt.Sprintf(" (pods it does not hold: %d %v; Reserved placeholders it does not hold: %d %v)",
		len(pods), pods[:min(3, len(pods))], len(rsvs), rsvs[:min(3, len(rsvs))])
}
