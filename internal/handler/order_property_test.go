package handler

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The relist property: the cache a set of API objects ends in does not depend on the order
// they are fed in, nor on restarts in between (a restart feeds a fresh handler everything
// again, with the statuses the previous one's status writer persisted).

// world is a final set of API objects, as a relist after a restart sees them.
type world struct {
	nodes []*corev1.Node
	pods  map[string]*corev1.Pod
	rsvs  map[string]*v1alpha1.Reservation
	// end is when the restart happens (the clock of the handlers that relist).
	end time.Time
	// live is the handler that saw the history, and whether every reservation's status
	// was written after its last change (then a relist must end where it ended).
	live        *Handler
	allRecorded bool
}

// object is one API object of a world, to feed in some order.
type object struct {
	pod  *corev1.Pod
	rsv  *v1alpha1.Reservation
	node *corev1.Node
}

func (w *world) objects() []object {
	var out []object
	for _, n := range w.nodes {
		out = append(out, object{node: n})
	}
	for _, name := range slices.Sorted(maps.Keys(w.rsvs)) {
		out = append(out, object{rsv: w.rsvs[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(w.pods)) {
		out = append(out, object{pod: w.pods[name]})
	}
	return out
}

// withStatuses returns the world's objects with the reservation statuses replaced by
// statuses (by name; the others keep theirs).
func withStatuses(objs []object, statuses map[string]v1alpha1.ReservationStatus) []object {
	out := slices.Clone(objs)
	for i, o := range out {
		if o.rsv == nil {
			continue
		}
		if st, ok := statuses[o.rsv.Name]; ok {
			r := o.rsv.DeepCopy()
			r.Status = st
			out[i].rsv = r
		}
	}
	return out
}

// relist feeds objs in the given order (indexes into objs) to a fresh handler whose clock
// reads end, and checks its invariants.
func relist(t testing.TB, objs []object, order []int, end time.Time, desc func() string) *Handler {
	t.Helper()
	h, clk := newQuietHandler(t)
	clk.SetTime(end)
	for _, i := range order {
		o := objs[i]
		var err error
		switch {
		case o.node != nil:
			err = h.Add(o.node)
		case o.rsv != nil:
			err = h.Add(o.rsv)
		default:
			err = h.Sync(store.PodKey(o.pod), o.pod, true, Current)
		}
		if err != nil {
			t.Fatalf("relist: %v\n%s", err, desc())
		}
	}
	if errs := h.CheckInvariants(); len(errs) > 0 {
		t.Fatalf("relist: invariants: %v\n%s", errs, desc())
	}
	return h
}

// persisted is what the status writer (internal/controllers/reservation_status.go) would write for
// every reservation the handler holds, by name.
func persisted(h *Handler, objs []object) map[string]v1alpha1.ReservationStatus {
	out := map[string]v1alpha1.ReservationStatus{}
	for _, o := range objs {
		if o.rsv == nil {
			continue
		}
		if v, ok := h.Reservation(types.NamespacedName{Namespace: o.rsv.Namespace, Name: o.rsv.Name}); ok {
			out[o.rsv.Name] = persistedStatus(o.rsv.Status, v)
		}
	}
	return out
}

// persistedStatus mirrors controllers.reservationStatus: the status a status writer derives
// from the cache's view of a reservation.
func persistedStatus(cur v1alpha1.ReservationStatus, v store.Reservation) v1alpha1.ReservationStatus {
	phase := v.Phase
	if phase == v1alpha1.ReservationMatched && v.OwnerAssumed {
		phase = v1alpha1.ReservationReserved
	}
	apiTime := func(t time.Time) *metav1.Time {
		if t.IsZero() {
			return nil
		}
		return ptr.To(metav1.NewTime(t.Truncate(time.Second)))
	}
	next := v1alpha1.ReservationStatus{Phase: phase, ReservedAt: apiTime(v.ReservedAt), Conditions: cur.Conditions}
	switch phase {
	case v1alpha1.ReservationReserved, v1alpha1.ReservationExpired:
		next.ExpiresAt = apiTime(v.ExpiresAt)
	case v1alpha1.ReservationMatched:
		owner := *v.Owner
		next.CurrentOwner = &owner
	}
	return next
}

// canonicalDump renders what must not depend on the order: every node's charges, pods and
// placeholders, every reservation's phase, node, owner and times, every pod's state.
func canonicalDump(t testing.TB, h *Handler) string {
	t.Helper()
	var b strings.Builder
	for _, info := range h.NodeInfos() {
		names := func(pods []*corev1.Pod) []string {
			out := make([]string, len(pods))
			for i, p := range pods {
				out[i] = store.PodKey(p).String()
			}
			sort.Strings(out)
			return out
		}
		fmt.Fprintf(&b, "node %s requested %dm/%d reserved %dm/%d best-effort %dm pods %v placeholders %v\n", info.Name,
			info.Requested.MilliCPU, info.Requested.Memory, info.Reserved.MilliCPU, info.Reserved.Memory,
			info.BestEffortRequested.MilliCPU, names(info.Pods), names(info.Placeholders))
	}
	h.mu.RLock()
	rsvs, err := json.Marshal(h.byName[stores.ReservationStoreName].Dump())
	var pods []string
	h.pods.Range(func(key types.NamespacedName, e *podstore.Entry) bool {
		pods = append(pods, fmt.Sprintf("%s %s on %q", key, e.State, e.Pod.Spec.NodeName))
		return true
	})
	h.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pods)
	fmt.Fprintf(&b, "reservations %s\npods %s\n", rsvs, strings.Join(pods, ", "))
	return b.String()
}

// history plays a random life of a small cluster on a live handler, fed as the reconcilers
// (Sync, reservation events), a scheduler (assume, forget, finish binding), the status
// writer and the housekeeping loop would feed it, and returns the objects the API holds at
// the end. Several reservations share a selector on a node; pods land before and after
// them.
func history(t testing.TB, r *rand.Rand) *world {
	h, clk := newQuietHandler(t)
	w := &world{pods: map[string]*corev1.Pod{}, rsvs: map[string]*v1alpha1.Reservation{}, live: h}
	rv := 0
	next := func() string { rv++; return strconv.Itoa(rv) }
	nodes := []string{"n0", "n1"}
	for _, n := range nodes {
		node := ts.MakeNode(n, "8", "16Gi")
		w.nodes = append(w.nodes, node)
		must(t, h.Add(node))
	}
	// do records one event of the history and checks that it was accepted and left every
	// invariant (every node settled included) holding.
	var events []string
	do := func(err error, format string, args ...any) {
		t.Helper()
		events = append(events, fmt.Sprintf("%s ", clk.Now().Format(time.TimeOnly))+fmt.Sprintf(format, args...))
		if err == nil {
			if errs := h.CheckInvariants(); len(errs) > 0 {
				err = fmt.Errorf("invariants: %v", errs)
			}
		}
		if err != nil {
			t.Fatalf("history: %v\n  %s", err, strings.Join(events, "\n  "))
		}
	}
	app := func() string { return []string{"web", "web", "db"}[r.IntN(3)] }
	// apply is the API changing a pod (nil: deleting it), then its reconciler running.
	apply := func(name string, pod *corev1.Pod) {
		if pod == nil {
			delete(w.pods, name)
		} else {
			pod.ResourceVersion = next()
			w.pods[name] = pod
		}
		desc := "gone"
		if pod != nil {
			desc = fmt.Sprintf("node=%q app=%s phase=%s created=%s landed=%s", pod.Spec.NodeName, pod.Labels["app"],
				pod.Status.Phase, pod.CreationTimestamp.Format(time.TimeOnly), landed(pod))
		}
		do(h.Sync(types.NamespacedName{Namespace: "ns", Name: name}, pod, true, Current), "API pod %s %s", name, desc)
	}
	bind := func(p *corev1.Pod, node string) *corev1.Pod {
		c := p.DeepCopy()
		c.Spec.NodeName = node
		ts.ScheduledAt(clk.Now())(c)
		return c
	}
	// writeStatus is the status writer persisting one reservation's status; the update
	// comes back through the reservation feed.
	writeStatus := func(name string) {
		cur := w.rsvs[name]
		v, ok := h.Reservation(types.NamespacedName{Namespace: "ns", Name: name})
		if !ok {
			return
		}
		st := persistedStatus(cur.Status, v)
		if equality.Semantic.DeepEqual(st, cur.Status) {
			return
		}
		upd := cur.DeepCopy()
		upd.Status, upd.ResourceVersion = st, next()
		w.rsvs[name] = upd
		owner := ""
		if st.CurrentOwner != nil {
			owner = st.CurrentOwner.Name
		}
		do(h.Update(cur, upd), "status of %s written: %s %s", name, st.Phase, owner)
	}
	assumed := map[string]*corev1.Pod{}
	var deleted []string // names free for reuse
	pickPod := func(ok func(*corev1.Pod) bool) *corev1.Pod {
		var names []string
		for _, name := range slices.Sorted(maps.Keys(w.pods)) {
			if ok(w.pods[name]) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return nil
		}
		return w.pods[names[r.IntN(len(names))]]
	}
	steps := 15 + r.IntN(30)
	for i := range steps {
		clk.Step(time.Duration(1+r.IntN(15)) * time.Second)
		switch r.IntN(12) {
		case 0, 1: // a reservation is created, mostly on n0
			name := fmt.Sprintf("r%02d", i)
			node := []string{"n0", "n0", "n0", "n1", "n1", ""}[r.IntN(6)]
			rs := ts.ReservationCreatedAt(ts.MakeReservation("ns", name, node, "1", "1Gi", "app", app()), clk.Now())
			if r.IntN(2) == 0 {
				rs.Spec.TTLSeconds = ptr.To(int64(20 + r.IntN(200)))
			}
			rs.ResourceVersion = next()
			w.rsvs[name] = rs
			do(h.Add(rs), "reservation %s created on %q for app=%s", name, node, rs.Spec.PodSelector.MatchLabels["app"])
		case 2, 3: // a pod is created: pending, or (rarely) with its node; sometimes under the
			// name of a deleted one (as a StatefulSet recreates its pods), with a new UID
			name := fmt.Sprintf("p%02d", i)
			opts := []ts.PodOption{ts.Requests("500m", "512Mi"), ts.WithLabels("app", app()), ts.CreatedAt(clk.Now())}
			if len(deleted) > 0 && r.IntN(3) == 0 {
				name = deleted[r.IntN(len(deleted))]
				deleted = slices.DeleteFunc(deleted, func(n string) bool { return n == name })
				opts = append(opts, ts.WithUID(fmt.Sprintf("uid-ns-%s-%d", name, i)))
			}
			if r.IntN(4) == 0 {
				opts = append(opts, ts.OnNode(nodes[r.IntN(2)]))
			}
			if r.IntN(10) == 0 {
				opts = append(opts, ts.BestEffort())
			}
			apply(name, ts.MakePod("ns", name, opts...))
		case 4, 5: // a scheduler places a pending pod: assumes it, or the API binds it at once
			p := pickPod(func(p *corev1.Pod) bool { return p.Spec.NodeName == "" && assumed[p.Name] == nil })
			if p == nil {
				continue
			}
			node := nodes[r.IntN(2)]
			if r.IntN(3) == 0 {
				apply(p.Name, bind(p, node))
				continue
			}
			a := p.DeepCopy()
			a.Spec.NodeName = node
			do(h.AssumePod(a), "pod %s assumed on %s", p.Name, node)
			assumed[p.Name] = a
			if r.IntN(2) == 0 {
				do(h.FinishBinding(a), "pod %s binding finished", p.Name)
			}
		case 6, 7: // an assumption is resolved: bound where assumed (rarely elsewhere), or forgotten
			names := slices.Sorted(maps.Keys(assumed))
			if len(names) == 0 {
				continue
			}
			name := names[r.IntN(len(names))]
			a := assumed[name]
			delete(assumed, name)
			switch r.IntN(6) {
			case 0:
				do(h.ForgetPod(a), "pod %s forgotten", name)
			case 1:
				apply(name, bind(w.pods[name], nodes[r.IntN(2)]))
			default:
				apply(name, bind(w.pods[name], a.Spec.NodeName))
			}
		case 8: // a pod completes, changes its labels, is stamped scheduled by its kubelet
			// (created with its node), or is deleted
			p := pickPod(func(p *corev1.Pod) bool { return assumed[p.Name] == nil })
			if p == nil {
				continue
			}
			next := p.DeepCopy()
			switch k := r.IntN(4); {
			case k == 0 && p.Spec.NodeName != "":
				next.Status.Phase = corev1.PodSucceeded
			case k == 1:
				next.Labels["app"] = app()
			case k == 2 && p.Spec.NodeName != "" && landed(p) == "-":
				ts.ScheduledAt(clk.Now())(next)
			default:
				next = nil
				deleted = append(deleted, p.Name)
			}
			apply(p.Name, next)
		case 9: // the status writer catches up with some reservations
			for _, name := range slices.Sorted(maps.Keys(w.rsvs)) {
				if r.IntN(2) == 0 {
					writeStatus(name)
				}
			}
		case 10: // time passes: assumed pods expire, reservations are reaped
			clk.Step(time.Duration(r.IntN(60)) * time.Second)
			expired, reaped := h.ExpireAssumedPods(), h.ReapReservations()
			do(nil, "%d assumed pods expired, %d reservations reaped", expired, len(reaped))
			for name := range assumed {
				if st, ok := h.PodState(types.NamespacedName{Namespace: "ns", Name: name}); !ok || st.State != store.PodAssumed {
					delete(assumed, name)
				}
			}
		case 11: // a Pending reservation gets a node, or a reservation is deleted
			names := slices.Sorted(maps.Keys(w.rsvs))
			if len(names) == 0 {
				continue
			}
			cur := w.rsvs[names[r.IntN(len(names))]]
			if cur.Spec.NodeName == "" {
				upd := cur.DeepCopy()
				upd.Spec.NodeName, upd.ResourceVersion = "n0", next()
				w.rsvs[cur.Name] = upd
				do(h.Update(cur, upd), "reservation %s placed on n0", cur.Name)
			} else if r.IntN(3) == 0 {
				delete(w.rsvs, cur.Name)
				do(h.Delete(cur), "reservation %s deleted", cur.Name)
			}
		}
	}
	// The schedulers finish: every assumption is confirmed or forgotten.
	for _, name := range slices.Sorted(maps.Keys(assumed)) {
		if r.IntN(2) == 0 {
			do(h.ForgetPod(assumed[name]), "pod %s forgotten", name)
		} else {
			apply(name, bind(w.pods[name], assumed[name].Spec.NodeName))
		}
	}
	if r.IntN(2) == 0 {
		for _, name := range slices.Sorted(maps.Keys(w.rsvs)) {
			writeStatus(name)
		}
		w.allRecorded = true
	}
	w.end = clk.Now()
	return w
}

// describe renders a world's objects in an order, for failure messages.
func describe(objs []object, order []int) string {
	var b strings.Builder
	for _, i := range order {
		o := objs[i]
		switch {
		case o.node != nil:
			fmt.Fprintf(&b, "  node %s\n", o.node.Name)
		case o.rsv != nil:
			owner := ""
			if o.rsv.Status.CurrentOwner != nil {
				owner = o.rsv.Status.CurrentOwner.Name
			}
			fmt.Fprintf(&b, "  reservation %s node=%q app=%s created=%s status=%s/%s\n", o.rsv.Name, o.rsv.Spec.NodeName,
				o.rsv.Spec.PodSelector.MatchLabels["app"], o.rsv.CreationTimestamp.Format(time.TimeOnly), o.rsv.Status.Phase, owner)
		default:
			fmt.Fprintf(&b, "  pod %s node=%q app=%s phase=%s created=%s landed=%s\n", o.pod.Name, o.pod.Spec.NodeName,
				o.pod.Labels["app"], o.pod.Status.Phase, o.pod.CreationTimestamp.Format(time.TimeOnly), landed(o.pod))
		}
	}
	return b.String()
}

func landed(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.LastTransitionTime.Format(time.TimeOnly)
		}
	}
	return "-"
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestRelist_AnyOrderAndAnyRestartEndInTheSamePlace: for random histories, the final set of
// objects is fed to fresh handlers in many orders, and across restarts (a fresh handler fed
// everything again with the statuses the previous one's writer persisted); the cache and
// the statuses it would write are the same every time, and they are where the live handler
// ended when its status writer had caught up.
func TestRelist_AnyOrderAndAnyRestartEndInTheSamePlace(t *testing.T) {
	worlds := 150
	if testing.Short() {
		worlds = 25
	}
	for seed := range worlds {
		relistProperty(t, uint64(seed), 8)
	}
}

// relistProperty checks the relist property on the world of one seed, with orders random
// orders (and a few restarts).
func relistProperty(t *testing.T, seed uint64, orders int) {
	t.Helper()
	{
		r := rand.New(rand.NewPCG(seed, 0x7e1157))
		w := history(t, r)
		objs := w.objects()
		n := len(objs)
		base := relist(t, objs, identity(n), w.end, func() string { return describe(objs, identity(n)) })
		want, wantStatus := canonicalDump(t, base), persisted(base, objs)
		check := func(what string, h *Handler, fed []object, order []int) {
			t.Helper()
			if got := canonicalDump(t, h); got != want {
				t.Fatalf("seed %d, %s: the cache differs\ngot:\n%s\nwant:\n%s\nobjects in the order fed:\n%s", seed, what, got, want, describe(fed, order))
			}
			if got := persisted(h, objs); !equality.Semantic.DeepEqual(got, wantStatus) {
				t.Fatalf("seed %d, %s: the statuses differ\ngot:  %v\nwant: %v\nobjects in the order fed:\n%s", seed, what, got, wantStatus, describe(fed, order))
			}
		}
		if w.allRecorded {
			check("the live handler, its statuses written", w.live, objs, identity(n))
		}
		for range orders {
			order := r.Perm(n)
			check("another order", relist(t, objs, order, w.end, func() string { return describe(objs, order) }), objs, order)
		}
		// A restart after the relist caught up: the statuses the first handler's writer
		// persisted are inputs of the second one.
		for range 3 {
			first := r.Perm(n)
			a := relist(t, objs, first, w.end, func() string { return describe(objs, first) })
			again, order := withStatuses(objs, persisted(a, objs)), r.Perm(n)
			check("a restart", relist(t, again, order, w.end, func() string { return describe(again, order) }), again, order)
		}
		// A restart in the middle of a relist. The status writers wait for the feeds to catch
		// up, so nothing was persisted: the next relist is a relist like the others. Had a
		// writer persisted what it saw of a part, those statuses would be inputs like any
		// other: with them too, every order ends in the same place, and the statuses the
		// next writer persists change nothing more (a fixpoint).
		for range 2 {
			perm := r.Perm(n)
			part := perm[:r.IntN(n+1)]
			a := relist(t, objs, part, w.end, func() string { return describe(objs, part) })
			order := r.Perm(n)
			check("a restart in the middle of a relist", relist(t, objs, order, w.end, func() string { return describe(objs, order) }), objs, order)

			partial := withStatuses(objs, persisted(a, objs))
			o1, o2 := r.Perm(n), r.Perm(n)
			b1 := relist(t, partial, o1, w.end, func() string { return describe(partial, o1) })
			b2 := relist(t, partial, o2, w.end, func() string { return describe(partial, o2) })
			d1, s1 := canonicalDump(t, b1), persisted(b1, partial)
			if d2 := canonicalDump(t, b2); d2 != d1 {
				t.Fatalf("seed %d, statuses of a partial relist: two orders differ\n%s\nvs\n%s\n%s", seed, d1, d2, describe(partial, o2))
			}
			if s2 := persisted(b2, partial); !equality.Semantic.DeepEqual(s1, s2) {
				t.Fatalf("seed %d, statuses of a partial relist: two orders write %v and %v", seed, s1, s2)
			}
			fixed, o3 := withStatuses(partial, s1), r.Perm(n)
			c := relist(t, fixed, o3, w.end, func() string { return describe(fixed, o3) })
			if d3 := canonicalDump(t, c); d3 != d1 {
				t.Fatalf("seed %d, statuses of a partial relist: not a fixpoint\n%s\nvs\n%s\n%s", seed, d1, d3, describe(fixed, o3))
			}
		}
	}
}
