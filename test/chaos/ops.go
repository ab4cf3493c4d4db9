package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// op is one kind of random operation and how often it is picked.
type op struct {
	name   string
	weight int
	do     func(*Workload, context.Context) error
}

var ops = []op{
	{"create-pod", 14, (*Workload).createPlainPod},
	{"create-pod-then-bind", 8, (*Workload).createBindPod},
	{"create-pod-for-scheduler", 8, (*Workload).createSchedPod},
	{"update-pod-labels", 8, (*Workload).updatePodLabels},
	{"set-pod-phase", 5, (*Workload).setPodPhase},
	{"delete-pod", 14, (*Workload).deletePod},
	{"create-expiring-reservation", 5, (*Workload).createExpireRsv},
	{"create-matched-reservation", 5, (*Workload).createMatchRsv},
	{"create-pending-reservation", 2, (*Workload).createPendingRsv},
	{"create-contended-reservations", 2, (*Workload).createContend},
	{"delete-reservation", 2, (*Workload).deleteRsv},
	{"create-running-gang", 2, (*Workload).createGroupRuns},
	{"create-starving-gang", 1, (*Workload).createGroupStarves},
	{"delete-gang", 2, (*Workload).deleteGroup},
	{"nmnode-status", 8, (*Workload).agentNMNode},
	{"cnr-status", 6, (*Workload).agentCNR},
	{"update-node", 3, (*Workload).updateNode},
	{"create-extra-node", 1, (*Workload).createExtraNode},
	{"delete-extra-node", 1, (*Workload).deleteExtraNode},
}

func (w *Workload) randomOp(ctx context.Context) {
	o := pick(w.intn, ops, func(o op) int { return o.weight })
	w.count(o.name, o.do(w, ctx))
}

// pick draws one of choices in proportion to weight, with intn.
func pick[T any](intn func(int) int, choices []T, weight func(T) int) T {
	total := 0
	for _, c := range choices {
		total += weight(c)
	}
	n := intn(total)
	for _, c := range choices {
		if n -= weight(c); n < 0 {
			return c
		}
	}
	panic("pick: no choice")
}

// pickKey returns a random key of m (read under w.mu) whose value keep accepts, or "" when
// there is none. The keys are sorted first, so that a seed picks the same.
func pickKey[V any](w *Workload, m map[string]V, keep func(V) bool) string {
	w.mu.Lock()
	var names []string
	for name, v := range m {
		if keep(v) {
			names = append(names, name)
		}
	}
	w.mu.Unlock()
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return names[w.intn(len(names))]
}

// pickPod returns a copy of a random pod whose class is one of classes, or nil.
func (w *Workload) pickPod(classes ...string) *PodIntent {
	name := pickKey(w, w.pods, func(p *PodIntent) bool { return slices.Contains(classes, p.Class) })
	if name == "" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p, ok := w.pods[name]; ok {
		c := *p
		return &c
	}
	return nil
}

// createPod creates pod and records what the workload means by it.
func (w *Workload) createPod(ctx context.Context, pod *corev1.Pod, in PodIntent) error {
	if err := w.create(ctx, pod); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods[in.Name] = &in
	return nil
}

func (w *Workload) createPlainPod(ctx context.Context) error {
	node, name := w.randomNode(), w.name("p")
	return w.createPod(ctx, newPod(w.ns, name, node, w.float() < 0.1), PodIntent{Name: name, Class: "plain", Node: node})
}

func (w *Workload) createBindPod(ctx context.Context) error {
	node, name := w.randomNode(), w.name("b")
	if err := w.createPod(ctx, newPod(w.ns, name, "", false), PodIntent{Name: name, Class: "bind", Node: node}); err != nil {
		return err
	}
	w.after(time.Duration(w.intn(800))*time.Millisecond, "bind-pod", func(ctx context.Context) error { return w.bind(ctx, name, node) }, nil)
	return nil
}

func (w *Workload) createSchedPod(ctx context.Context) error {
	name := w.name("s")
	return w.createPod(ctx, newSchedPod(w.ns, name, "", ""), PodIntent{Name: name, Class: "sched"})
}

func (w *Workload) updatePodLabels(ctx context.Context) error {
	p := w.pickPod("plain", "bind", "sched", "target", "member")
	if p == nil {
		return nil
	}
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = w.ns, p.Name
	patch := client.RawPatch("application/merge-patch+json",
		[]byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"v%d"}}}`, LabelApp, w.intn(5))))
	return client.IgnoreNotFound(w.c.Patch(ctx, pod, patch))
}

// setPodPhase plays the kubelet: a bound plain pod runs, or (rarely) ends.
func (w *Workload) setPodPhase(ctx context.Context) error {
	p := w.pickPod("plain")
	if p == nil {
		return nil
	}
	phase := corev1.PodRunning
	switch r := w.float(); {
	case r < 0.15:
		phase = corev1.PodSucceeded
	case r < 0.3:
		phase = corev1.PodFailed
	}
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = w.ns, p.Name
	return client.IgnoreNotFound(w.patchStatus(ctx, pod, func() { pod.Status.Phase = phase }))
}

// deletePod deletes a random pod; a reservation's target only once the reservation says
// Matched (its expectation is then settled), a gang's members only with the gang.
func (w *Workload) deletePod(ctx context.Context) error {
	p := w.pickPod("plain", "bind", "sched", "target")
	if p == nil {
		return nil
	}
	if p.Class == "target" {
		// Only once its reservation was seen Matched: the check at the end expects Matched
		// of a reservation whose pod lives (a status not yet seen, as while the suite's
		// reflector relists after an API server restart, is not one).
		st, ok := w.rec.ReservationStatus(w.ns + "/" + p.Rsv)
		if !ok || st.Phase != v1alpha1.ReservationMatched {
			return nil
		}
	}
	pod := &corev1.Pod{}
	pod.Namespace, pod.Name = w.ns, p.Name
	if err := w.deleteNow(ctx, pod); err != nil {
		return err
	}
	w.mu.Lock()
	delete(w.pods, p.Name)
	w.mu.Unlock()
	return nil
}

// createRsv creates a reservation of the workload's size selecting key=value and records
// what the workload means by it (in, given its creation time).
func (w *Workload) createRsv(ctx context.Context, in RsvIntent, key, value string) error {
	r := newReservation(w.ns, in.Name, in.Node, in.TTL, key, value)
	if err := w.create(ctx, r); err != nil {
		return err
	}
	in.Created = r.CreationTimestamp.Time
	w.mu.Lock()
	defer w.mu.Unlock()
	// Its node may have been deleted between being picked and the reservation's creation.
	in.NodeDeleted = w.deleted[in.Node]
	w.rsvs[in.Name] = &in
	return nil
}

func (w *Workload) rsvChanged(name string, fn func(*RsvIntent)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.rsvs[name]; ok {
		fn(r)
	}
}

// createExpireRsv: a reservation nobody matches, with a short TTL: it must expire, not
// before its TTL, and never be matched.
func (w *Workload) createExpireRsv(ctx context.Context) error {
	name := w.name("e")
	return w.createRsv(ctx, RsvIntent{Name: name, Class: "expire", Node: w.randomNode(), TTL: int64(2 + w.intn(7))}, LabelNobody, name)
}

// createMatchRsv: a reservation for exactly one pod, created a little later on its node by
// one of three paths (created bound, bound through the binding subresource, or by the
// simulated scheduler): it must end Matched by that pod and never expire.
func (w *Workload) createMatchRsv(ctx context.Context) error {
	_, err := w.createMatch(ctx, w.randomNode(), "", false)
	return err
}

// createMatch creates a "match" reservation on node and, a little later, its pod
// (targetPodLater); pinned keeps it from the random deletes.
func (w *Workload) createMatch(ctx context.Context, node, bindDelay string, pinned bool) (string, error) {
	name := w.name("m")
	if err := w.createRsv(ctx, RsvIntent{Name: name, Class: "match", Node: node, TTL: longTTL, Pinned: pinned}, LabelRsv, name); err != nil {
		return "", err
	}
	w.targetPodLater(name, node, bindDelay)
	return name, nil
}

// targetPodLater creates the pod a reservation waits for, after the reservation's creation
// second has passed (a pod that landed before the reservation was created cannot consume
// it). bindDelay makes the simulated scheduler bind it that late.
func (w *Workload) targetPodLater(rsv, node, bindDelay string) {
	pod := "t" + rsv[1:]
	path := w.intn(3)
	if bindDelay != "" {
		path = 2
	}
	abandon := func() { w.rsvChanged(rsv, func(r *RsvIntent) { r.Abandoned = true }) }
	w.after(1200*time.Millisecond, "create-target-pod", func(ctx context.Context) error {
		var p *corev1.Pod
		switch path {
		case 0:
			p = newPod(w.ns, pod, node, false, LabelRsv, rsv)
		case 1:
			p = newPod(w.ns, pod, "", false, LabelRsv, rsv)
		default:
			p = newSchedPod(w.ns, pod, node, bindDelay, LabelRsv, rsv)
		}
		if err := w.createPod(ctx, p, PodIntent{Name: pod, Class: "target", Node: node, Rsv: rsv}); err != nil {
			return err
		}
		w.rsvChanged(rsv, func(r *RsvIntent) { r.Target = pod })
		if path == 1 {
			w.after(time.Duration(w.intn(500))*time.Millisecond, "bind-target-pod",
				func(ctx context.Context) error { return w.bind(ctx, pod, node) }, abandon)
		}
		return nil
	}, abandon)
}

// createPendingRsv: a reservation without a node, given one a little later.
func (w *Workload) createPendingRsv(ctx context.Context) error {
	name := w.name("q")
	if err := w.createRsv(ctx, RsvIntent{Name: name, Class: "pending", TTL: longTTL}, LabelNobody, name); err != nil {
		return err
	}
	node := w.randomNode()
	w.after(time.Duration(1000+w.intn(2000))*time.Millisecond, "place-pending-reservation", func(ctx context.Context) error {
		obj := &v1alpha1.Reservation{}
		obj.Namespace, obj.Name = w.ns, name
		patch := client.RawPatch("application/merge-patch+json", []byte(fmt.Sprintf(`{"spec":{"nodeName":%q}}`, node)))
		if err := client.IgnoreNotFound(w.c.Patch(ctx, obj, patch)); err != nil {
			return err
		}
		w.rsvChanged(name, func(r *RsvIntent) { r.Node = node })
		return nil
	}, func() { w.rsvChanged(name, func(r *RsvIntent) { r.Abandoned = true }) })
	return nil
}

// createContend: two reservations on one node select the same single pod: at most one may
// end Matched by it.
func (w *Workload) createContend(ctx context.Context) error {
	node, name := w.randomNode(), w.name("c")
	for _, pair := range [][2]string{{name + "-a", name + "-b"}, {name + "-b", name + "-a"}} {
		if err := w.createRsv(ctx, RsvIntent{Name: pair[0], Class: "contend", Node: node, TTL: longTTL, Peer: pair[1]}, LabelContend, name); err != nil {
			return err
		}
	}
	pod := "k" + name[1:]
	w.after(1200*time.Millisecond, "create-contended-pod", func(ctx context.Context) error {
		if err := w.createPod(ctx, newPod(w.ns, pod, node, false, LabelContend, name), PodIntent{Name: pod, Class: "target", Node: node, Rsv: name + "-a"}); err != nil {
			return err
		}
		for _, s := range []string{"-a", "-b"} {
			w.rsvChanged(name+s, func(r *RsvIntent) { r.Target = pod })
		}
		return nil
	}, nil)
	return nil
}

func (w *Workload) deleteRsv(ctx context.Context) error {
	name := pickKey(w, w.rsvs, func(r *RsvIntent) bool { return !r.Deleted && !r.Pinned && r.Class != "burst" })
	if name == "" {
		return nil
	}
	obj := &v1alpha1.Reservation{}
	obj.Namespace, obj.Name = w.ns, name
	if err := w.deleteNow(ctx, obj); err != nil {
		return err
	}
	w.rsvChanged(name, func(r *RsvIntent) { r.Deleted = true })
	return nil
}

// createGroupRuns: a gang whose members are all created at once, bound and then running;
// its schedule timeout is far away, so it must never be written Timeout.
func (w *Workload) createGroupRuns(ctx context.Context) error {
	return w.createGroup(ctx, w.name("g"), "runs", int32(2+w.intn(3)), longTTL)
}

// createGroupStarves: a gang of three with one member and a short timeout: Timeout.
func (w *Workload) createGroupStarves(ctx context.Context) error {
	return w.createGroup(ctx, w.name("h"), "starves", 3, int32(3+w.intn(3)))
}

func (w *Workload) createGroup(ctx context.Context, name, class string, minMember, timeout int32) error {
	if err := w.create(ctx, newPodGroup(w.ns, name, minMember, timeout)); err != nil {
		return err
	}
	g := &GroupIntent{Name: name, Class: class, MinMember: minMember, Timeout: timeout, Created: time.Now()}
	members := 1
	if class == "runs" {
		members = int(minMember) + w.intn(2)
	}
	for i := range members {
		g.Members = append(g.Members, fmt.Sprintf("%s-%d", name, i))
	}
	w.mu.Lock()
	w.groups[name] = g
	w.mu.Unlock()
	abandon := func() {
		w.mu.Lock()
		g.Abandoned = true
		w.mu.Unlock()
	}
	for _, m := range g.Members {
		node := w.randomNode()
		w.after(0, "create-gang-member", func(ctx context.Context) error {
			p := newPod(w.ns, m, node, false, v1alpha1.PodGroupLabel, name)
			if err := w.createPod(ctx, p, PodIntent{Name: m, Class: "member", Node: node}); err != nil {
				return err
			}
			if class != "runs" {
				return nil
			}
			w.after(500*time.Millisecond, "run-gang-member", func(ctx context.Context) error {
				pod := &corev1.Pod{}
				pod.Namespace, pod.Name = w.ns, m
				return client.IgnoreNotFound(w.patchStatus(ctx, pod, func() { pod.Status.Phase = corev1.PodRunning }))
			}, abandon)
			return nil
		}, abandon)
	}
	return nil
}

func (w *Workload) deleteGroup(ctx context.Context) error {
	name := pickKey(w, w.groups, func(g *GroupIntent) bool { return !g.Deleted })
	if name == "" {
		return nil
	}
	pg := &v1alpha1.PodGroup{}
	pg.Namespace, pg.Name = w.ns, name
	if err := w.deleteNow(ctx, pg); err != nil {
		return err
	}
	w.mu.Lock()
	g := w.groups[name]
	g.Deleted = true
	members := append([]string(nil), g.Members...)
	w.mu.Unlock()
	for _, m := range members {
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = w.ns, m
		if err := w.deleteNow(ctx, pod); err != nil {
			return err
		}
		w.mu.Lock()
		delete(w.pods, m)
		w.mu.Unlock()
	}
	return nil
}

// agentNMNode plays the node manager: it reports a new allocatable.
func (w *Workload) agentNMNode(ctx context.Context) error {
	nm := &v1alpha1.NMNode{}
	nm.Name = w.randomNode()
	cpu := resource.MustParse(fmt.Sprint(56 + w.intn(9)))
	return client.IgnoreNotFound(w.patchStatus(ctx, nm, func() {
		if nm.Status.ResourceAllocatable == nil {
			nm.Status.ResourceAllocatable = corev1.ResourceList{}
		}
		nm.Status.ResourceAllocatable[corev1.ResourceCPU] = cpu
	}))
}

// agentCNR plays the reclaimed-resource agent: a new best-effort pool.
func (w *Workload) agentCNR(ctx context.Context) error {
	cnr := &v1alpha1.CustomNodeResource{}
	cnr.Name = w.randomNode()
	cpu := resource.MustParse(fmt.Sprint(4 + w.intn(13)))
	return client.IgnoreNotFound(w.patchStatus(ctx, cnr, func() {
		if cnr.Status.Resources.Allocatable == nil {
			cnr.Status.Resources.Allocatable = corev1.ResourceList{}
		}
		cnr.Status.Resources.Allocatable[corev1.ResourceCPU] = cpu
	}))
}

func (w *Workload) updateNode(ctx context.Context) error {
	node := &corev1.Node{}
	node.Name = w.randomNode()
	patch := client.RawPatch("application/merge-patch+json",
		[]byte(fmt.Sprintf(`{"metadata":{"labels":{"chaos.multicache.dev/zone":"z%d"}}}`, w.intn(4))))
	return client.IgnoreNotFound(w.c.Patch(ctx, node, patch))
}

func (w *Workload) createExtraNode(ctx context.Context) error {
	name := w.name("x")
	if err := w.CreateNode(ctx, name, LabelExtraNode, "true"); err != nil {
		return err
	}
	w.mu.Lock()
	w.extra[name] = true
	w.mu.Unlock()
	return nil
}

func (w *Workload) deleteExtraNode(ctx context.Context) error {
	name := pickKey(w, w.extra, func(bool) bool { return true })
	if name == "" {
		return nil
	}
	w.mu.Lock()
	delete(w.extra, name)
	w.deleted[name] = true
	for _, r := range w.rsvs {
		if r.Node == name {
			r.NodeDeleted = true
		}
	}
	w.mu.Unlock()
	return w.DeleteNode(ctx, name)
}

// CreateNode creates a Node, its NMNode and its CNR with their agents' status.
func (w *Workload) CreateNode(ctx context.Context, name string, labels ...string) error {
	if err := w.create(ctx, newNode(name, labels...)); err != nil {
		return err
	}
	// A create drops a custom resource's status: the agents write theirs after it.
	for _, obj := range []client.Object{newNMNode(name), newCNR(name)} {
		want := obj.DeepCopyObject().(client.Object)
		if err := w.create(ctx, obj); err != nil {
			return err
		}
		want.SetResourceVersion(obj.GetResourceVersion())
		if err := w.c.Status().Update(ctx, want); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNode deletes a Node, its NMNode and its CNR (whatever is still on the node).
func (w *Workload) DeleteNode(ctx context.Context, name string) error {
	node, nm, cnr := &corev1.Node{}, &v1alpha1.NMNode{}, &v1alpha1.CustomNodeResource{}
	node.Name, nm.Name, cnr.Name = name, name, name
	for _, obj := range []client.Object{node, nm, cnr} {
		if err := w.deleteNow(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}
