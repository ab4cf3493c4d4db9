package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func readDump(ctx context.Context, e *endpoint) (*debug.Dump, error) {
	body, err := e.get(ctx, "/debug/cache")
	if err != nil {
		return nil, err
	}
	d := &debug.Dump{}
	if err := json.Unmarshal(body, d); err != nil {
		return nil, fmt.Errorf("reading the cache dump from %s: %w (is it multicache's debug server?)", e.base, err)
	}
	return d, nil
}

// table writes aligned columns, like kubectl get.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, header ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) { _, _ = fmt.Fprintln(t.w, strings.Join(cells, "\t")) }

func (t *table) flush() error { return t.w.Flush() }

// quantity prints a resource of a list, "0" when absent.
func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		return "0"
	}
	return q.String()
}

// free is allocatable minus requested (which includes what reservations hold), as the
// cache's NodeInfo.Free computes it.
func free(alloc, req corev1.ResourceList, name corev1.ResourceName) string {
	q := alloc[name].DeepCopy()
	r := req[name]
	q.Sub(r)
	if q.Sign() == 0 {
		return "0"
	}
	return q.String()
}

// showNodes prints one row per node, by name.
func showNodes(out io.Writer, d *debug.Dump) error {
	if len(d.Nodes) == 0 {
		_, err := fmt.Fprintln(out, "No nodes in the cache.")
		return err
	}
	// RESERVATIONS counts what `node NAME` lists: the Reserved and Matched reservations on
	// the node (the node's own dump names only those still charged, the Reserved ones).
	onNode := map[string]int{}
	for _, r := range d.Reservations {
		if r.Phase == v1alpha1.ReservationReserved || r.Phase == v1alpha1.ReservationMatched {
			onNode[r.Node]++
		}
	}
	t := newTable(out, "NODE", "CPU ALLOC", "CPU REQ", "CPU FREE", "MEM ALLOC", "MEM REQ", "MEM FREE", "PODS", "RESERVATIONS", "DEVICES FREE/TOTAL", "SOURCES")
	for _, name := range slices.Sorted(maps.Keys(d.Nodes)) {
		n := d.Nodes[name]
		t.row(name,
			quantity(n.Allocatable, corev1.ResourceCPU), quantity(n.Requested, corev1.ResourceCPU), free(n.Allocatable, n.Requested, corev1.ResourceCPU),
			quantity(n.Allocatable, corev1.ResourceMemory), quantity(n.Requested, corev1.ResourceMemory), free(n.Allocatable, n.Requested, corev1.ResourceMemory),
			fmt.Sprint(len(n.Pods)), fmt.Sprint(onNode[name]), devicesCell(d.Devices.Nodes, name), strings.Join(n.Sources, ","))
	}
	return t.flush()
}

// devicesCell is a node's free/total DRA devices; "-" when no pool reaches it (or the
// devices store is off).
func devicesCell(nodes map[string]devicestore.NodeDump, name string) string {
	n, ok := nodes[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%d/%d", n.Devices.Free, n.Devices.Total)
}

// showNode prints one node: its sources, every resource it knows, its pods and the
// reservations on it.
func showNode(out io.Writer, v *debug.NodeView) error {
	_, _ = fmt.Fprintf(out, "Node:     %s\nSources:  %s\n\n", v.Name, strings.Join(v.Sources, ", "))
	names := map[corev1.ResourceName]bool{}
	for _, l := range []corev1.ResourceList{v.Allocatable, v.Requested, v.Reserved, v.BestEffortAllocatable, v.BestEffortRequested, v.DRARequested} {
		for n := range l {
			names[n] = true
		}
	}
	// DRA-REQUESTED: extended resources DRA devices serve here (charged to the devices below,
	// not to allocatable).
	t := newTable(out, "RESOURCE", "ALLOCATABLE", "REQUESTED", "FREE", "RESERVED", "BEST-EFFORT ALLOC", "BEST-EFFORT REQ", "DRA-REQUESTED")
	for _, n := range slices.Sorted(maps.Keys(names)) {
		t.row(string(n), quantity(v.Allocatable, n), quantity(v.Requested, n), free(v.Allocatable, v.Requested, n), quantity(v.Reserved, n),
			quantity(v.BestEffortAllocatable, n), quantity(v.BestEffortRequested, n), quantity(v.DRARequested, n))
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(out, "\nPods (%d):\n", len(v.Pods))
	for _, p := range v.Pods {
		_, _ = fmt.Fprintf(out, "  %s\n", p)
	}
	_, _ = fmt.Fprintf(out, "\nReservations (%d):\n", len(v.Reservations))
	for _, r := range v.Reservations {
		owner := ""
		if r.Owner != "" {
			owner = " owner " + r.Owner
		}
		_, _ = fmt.Fprintf(out, "  %s %s%s\n", r.Key, r.Phase, owner)
	}
	return showNodeDevices(out, v.Devices)
}

// showNodeDevices prints a node's DRA devices: the node's counts and each DeviceClass's,
// then each pool's.
func showNodeDevices(out io.Writer, d *store.NodeDevices) error {
	if d == nil {
		_, err := fmt.Fprintln(out, "\nDevices: none (no resource pool reaches the node, or the devices store is off)")
		return err
	}
	_, _ = fmt.Fprintf(out, "\nDevices (%d, %d allocated, %d free):\n", d.Total, d.Allocated, d.Free)
	t := newTable(out, "DEVICECLASS", "TOTAL", "ALLOCATED", "FREE")
	for _, class := range slices.Sorted(maps.Keys(d.ByClass)) {
		c := d.ByClass[class]
		t.row(class, fmt.Sprint(c.Total), fmt.Sprint(c.Allocated), fmt.Sprint(c.Free))
	}
	if err := t.flush(); err != nil {
		return err
	}
	_, _ = fmt.Fprintln(out)
	// A shared pool's devices reach other nodes too (node selector, all nodes): each node
	// counts them. An incomplete or invalid pool counts none of its devices.
	t = newTable(out, "POOL", "GENERATION", "TOTAL", "ALLOCATED", "FREE", "SHARED", "PROBLEM")
	for _, key := range slices.Sorted(maps.Keys(d.ByPool)) {
		p := d.ByPool[key]
		var problems []string
		if p.Incomplete {
			problems = append(problems, "incomplete")
		}
		if p.Invalid {
			problems = append(problems, "invalid")
		}
		t.row(key, fmt.Sprint(p.Generation), fmt.Sprint(p.Total), fmt.Sprint(p.Allocated), fmt.Sprint(p.Free), fmt.Sprint(p.Shared),
			orDash(strings.Join(problems, ",")))
	}
	return t.flush()
}

// showPods prints the cached pods (only the assumed ones with assumedOnly), by key.
func showPods(out io.Writer, d *debug.Dump, assumedOnly bool, now time.Time) error {
	t := newTable(out, "POD", "NODE", "STATE", "PHASE", "EXPIRES")
	rows := 0
	for _, key := range slices.Sorted(maps.Keys(d.Pods)) {
		p := d.Pods[key]
		if assumedOnly && string(p.State) != "Assumed" {
			continue
		}
		rows++
		expires := "-"
		if p.Deadline != nil {
			expires = until(now, *p.Deadline)
		} else if string(p.State) == "Assumed" {
			expires = "binding" // the TTL starts when the binding finished
		}
		t.row(key, orDash(p.Node), string(p.State), orDash(p.Phase), expires)
	}
	if rows == 0 {
		what := "pods"
		if assumedOnly {
			what = "assumed pods"
		}
		_, err := fmt.Fprintf(out, "No %s in the cache.\n", what)
		return err
	}
	return t.flush()
}

// showReservations prints the reservations, by key.
func showReservations(out io.Writer, d *debug.Dump, now time.Time) error {
	if len(d.Reservations) == 0 {
		_, err := fmt.Fprintln(out, "No reservations in the cache.")
		return err
	}
	t := newTable(out, "RESERVATION", "PHASE", "NODE", "CPU", "MEMORY", "OWNER", "EXPIRES")
	for _, key := range slices.Sorted(maps.Keys(d.Reservations)) {
		r := d.Reservations[key]
		// A Matched reservation no longer expires (its pod consumed it): "-", as the empty
		// EXPIRES of `kubectl get reservations`.
		expires := "-"
		if r.ExpiresAt != nil && r.Phase != v1alpha1.ReservationMatched {
			expires = until(now, *r.ExpiresAt)
		}
		t.row(key, string(r.Phase), orDash(r.Node), quantity(r.Resources, corev1.ResourceCPU), quantity(r.Resources, corev1.ResourceMemory),
			orDash(r.Owner), expires)
	}
	return t.flush()
}

// showPodGroups prints the pod groups with their member counts, by key.
func showPodGroups(out io.Writer, d *debug.Dump) error {
	if len(d.PodGroups) == 0 {
		_, err := fmt.Fprintln(out, "No pod groups in the cache.")
		return err
	}
	t := newTable(out, "PODGROUP", "PHASE", "MIN", "PENDING", "SCHEDULED", "RUNNING", "SUCCEEDED", "FAILED")
	for _, key := range slices.Sorted(maps.Keys(d.PodGroups)) {
		g := d.PodGroups[key]
		phase := string(g.Phase)
		if !g.Exists {
			phase = "<no PodGroup>" // members label a group that does not exist
		}
		c := g.Counts
		t.row(key, orDash(phase), fmt.Sprint(g.MinMember), fmt.Sprint(c.Pending), fmt.Sprint(c.Scheduled), fmt.Sprint(c.Running),
			fmt.Sprint(c.Succeeded), fmt.Sprint(c.Failed))
	}
	return t.flush()
}

// showCompare prints the differences between the cache and the API; it returns how many.
func showCompare(out io.Writer, diffs []drift.Difference) (int, error) {
	if len(diffs) == 0 {
		_, err := fmt.Fprintln(out, "The cache equals the API: no differences.")
		return 0, err
	}
	t := newTable(out, "KIND", "KEY", "PROBLEM", "CACHE RV", "API RV")
	for _, d := range diffs {
		t.row(string(d.Kind), d.Key, d.Problem, orDash(d.CacheVersion), orDash(d.APIVersion))
	}
	return len(diffs), t.flush()
}

// until renders the time left to t like kubectl's ages ("in 4m" or "3s ago").
func until(now, t time.Time) string {
	d := t.Sub(now).Round(time.Second)
	if d < 0 {
		return (-d).String() + " ago"
	}
	return "in " + d.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
