package devicestore_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestClusterCounts_KeptTotalsEqualARecountAfterRandomEvents: the totals ClusterCounts
// keeps as events arrive equal, after every event of random sequences, a count of the
// store's devices (the count ClusterCounts made on each call before) and the devices of
// every node's list, each counted once: nodes added, relabelled and deleted; slices of
// node-local, all-nodes, node-selector and per-device pools, in several generations, some
// incomplete, updated in place, moved to another pool, deleted; claims allocated dedicated,
// shared and admin-access devices (published or not), reallocated, deallocated, deleted,
// assumed and confirmed; classes added, changed (one fails on some devices) and removed.
// The self-check finds nothing wrong with the totals.
func TestClusterCounts_KeptTotalsEqualARecountAfterRandomEvents(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newTotalsWorld(rand.New(rand.NewPCG(seed, 19)), newStore(t))
			for step := range 250 {
				op := w.step()
				if err := w.check(); err != nil {
					t.Fatalf("step %d (%s): %v", step, op, err)
				}
			}
		})
	}
}

// TestClusterCounts_TheSelfCheckReportsTotalsThatDisagreeWithACount: totals that no longer
// match the devices are reported by CheckInvariants with both counts.
func TestClusterCounts_TheSelfCheckReportsTotalsThatDisagreeWithACount(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 4), onNode("n1")))
	noViolations(t, s)
	s.MiscountForTest()
	var found []string
	for _, err := range s.CheckInvariants() {
		if strings.Contains(err.Error(), "device totals") {
			found = append(found, err.Error())
		}
	}
	if len(found) != 1 || !strings.Contains(found[0], "Total:5") || !strings.Contains(found[0], "Total:4") {
		t.Errorf("self-check of totals off by one: %q, want one finding with the kept (5) and counted (4) totals", found)
	}
}

// totalsWorld drives a store with random events over a small universe of names, so that
// events hit the same nodes, pools, devices, claims and classes again.
type totalsWorld struct {
	r       *rand.Rand
	s       *devicestore.Store
	nodes   map[string]*corev1.Node
	slices  map[string]*resourcev1.ResourceSlice
	classes map[string]*resourcev1.DeviceClass
	// claims are the claims the store is charged with, assumed ones included.
	claims map[string]*resourcev1.ResourceClaim
}

const totalsNodes = 4

var (
	totalsDrivers = []string{"gpu.example.com", "nic.example.com"}
	totalsPools   = []string{"local-0", "local-1", "local-2", "local-3", "all", "selected", "per-device"}
	totalsExprs   = []string{
		`device.driver == "gpu.example.com"`,
		`device.attributes["gpu.example.com"].model == "big"`, // fails on a NIC: no such key
		`device.allowMultipleAllocations`,
		`true`,
		`false`,
	}
)

func newTotalsWorld(r *rand.Rand, s *devicestore.Store) *totalsWorld {
	return &totalsWorld{r: r, s: s, nodes: map[string]*corev1.Node{}, slices: map[string]*resourcev1.ResourceSlice{},
		classes: map[string]*resourcev1.DeviceClass{}, claims: map[string]*resourcev1.ResourceClaim{}}
}

func (w *totalsWorld) pick(n int) int { return w.r.IntN(n) }

func (w *totalsWorld) step() string {
	switch k := w.pick(10); {
	case k == 0:
		return w.nodeEvent()
	case k <= 3:
		return w.sliceEvent()
	case k <= 7:
		return w.claimEvent()
	default:
		return w.classEvent()
	}
}

func (w *totalsWorld) nodeEvent() string {
	name := fmt.Sprintf("n%d", w.pick(totalsNodes))
	cur, ok := w.nodes[name]
	n := node(name, "rack", []string{"a", "b"}[w.pick(2)])
	switch {
	case !ok:
		w.s.AddNode(n)
		w.nodes[name] = n
		return "add node " + name
	case w.pick(3) == 0:
		w.s.DeleteNode(cur)
		delete(w.nodes, name)
		return "delete node " + name
	default:
		w.s.UpdateNode(cur, n)
		w.nodes[name] = n
		return "relabel node " + name
	}
}

// randomSlice is slice name of a random pool, generation and count, with up to 4 devices.
func (w *totalsWorld) randomSlice(name string) *resourcev1.ResourceSlice {
	driver := totalsDrivers[w.pick(len(totalsDrivers))]
	pi := w.pick(len(totalsPools))
	pool := totalsPools[pi]
	gen, count := int64(1+w.pick(3)), int64(1+w.pick(2))
	var opts []sliceOpt
	n := 1 + w.pick(4)
	names := devs(fmt.Sprintf("d%d-", w.pick(2)), n) // generations and slices of a pool name the same devices
	switch {
	case pi < totalsNodes:
		opts = append(opts, onNode(fmt.Sprintf("n%d", (pi+w.pick(2))%totalsNodes))) // an older generation elsewhere, sometimes
	case pool == "all":
		opts = append(opts, allNodes())
	case pool == "selected":
		opts = append(opts, selecting("rack", []string{"a", "b"}[w.pick(2)]))
	default:
		var where []string
		for range n {
			where = append(where, []string{"*", fmt.Sprintf("n%d", w.pick(totalsNodes))}[w.pick(2)])
		}
		opts = append(opts, perDevice(where...))
	}
	opts = append(opts, withAttr("model", []string{"big", "small"}[w.pick(2)]))
	if w.pick(3) == 0 {
		opts = append(opts, multiAlloc())
	}
	return makeSlice(name, driver, pool, gen, count, names, opts...)
}

func (w *totalsWorld) sliceEvent() string {
	name := fmt.Sprintf("slice-%d", w.pick(12))
	cur, ok := w.slices[name]
	switch {
	case !ok:
		s := w.randomSlice(name)
		w.s.AddResourceSlice(s)
		w.slices[name] = s
		return "add slice " + name
	case w.pick(4) == 0:
		w.s.DeleteResourceSlice(cur)
		delete(w.slices, name)
		return "delete slice " + name
	case w.pick(3) == 0:
		// The same devices in a new generation, as a driver republishes them.
		s := cur.DeepCopy()
		s.Spec.Pool.Generation++
		w.s.UpdateResourceSlice(cur, s)
		w.slices[name] = s
		return "next generation of slice " + name
	default:
		s := w.randomSlice(name) // perhaps another pool
		w.s.UpdateResourceSlice(cur, s)
		w.slices[name] = s
		return "replace slice " + name
	}
}

func (w *totalsWorld) randomClaim(name string) *resourcev1.ResourceClaim {
	var results []result
	for range w.pick(3) {
		r := result{
			driver: totalsDrivers[w.pick(len(totalsDrivers))],
			pool:   totalsPools[w.pick(len(totalsPools))],
			device: fmt.Sprintf("d%d-%d", w.pick(2), w.pick(4)),
		}
		switch w.pick(6) {
		case 0:
			r.admin = true
		case 1, 2:
			r.share = fmt.Sprintf("share-%d", w.pick(2))
		}
		results = append(results, r)
	}
	c := makeClaim("ns", name, results...)
	if len(results) > 0 && c.Status.Allocation.Devices.Results[0].ShareID != nil {
		c.Status.Allocation.Devices.Results[0].ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse(fmt.Sprintf("%dGi", 1+w.pick(3)))}
	}
	return c
}

func (w *totalsWorld) claimEvent() string {
	name := fmt.Sprintf("claim-%d", w.pick(10))
	cur, ok := w.claims[name]
	next := w.randomClaim(name)
	switch k := w.pick(8); {
	case !ok && k < 2 && next.Status.Allocation != nil:
		w.s.AssumeResourceClaim(nil, next)
		w.claims[name] = next
		return "assume new claim " + name
	case !ok:
		w.s.AddResourceClaim(next)
		w.claims[name] = next
		return "add claim " + name
	case k == 0:
		w.s.DeleteResourceClaim(cur)
		delete(w.claims, name)
		return "delete claim " + name
	case k <= 2 && next.Status.Allocation != nil:
		w.s.AssumeResourceClaim(cur, next)
		w.claims[name] = next
		return "assume claim " + name
	case k == 3:
		// The API's claim, equal to the one charged: confirms an assumption.
		same := cur.DeepCopy()
		w.s.UpdateResourceClaim(cur, same)
		w.claims[name] = same
		return "confirm claim " + name
	default:
		w.s.UpdateResourceClaim(cur, next)
		w.claims[name] = next
		return "reallocate claim " + name
	}
}

func (w *totalsWorld) classEvent() string {
	name := fmt.Sprintf("class-%d", w.pick(4))
	cur, ok := w.classes[name]
	var exprs []string
	for range 1 + w.pick(2) {
		exprs = append(exprs, totalsExprs[w.pick(len(totalsExprs))])
	}
	c := makeClass(name, exprs...)
	switch {
	case !ok:
		w.s.AddDeviceClass(c)
		w.classes[name] = c
		return "add class " + name + " " + strings.Join(exprs, " && ")
	case w.pick(3) == 0:
		w.s.DeleteDeviceClass(cur)
		delete(w.classes, name)
		return "delete class " + name
	default:
		w.s.UpdateDeviceClass(cur, c)
		w.classes[name] = c
		return "change class " + name + " to " + strings.Join(exprs, " && ")
	}
}

// check compares the kept totals with a count of the pools and with the node lists.
func (w *totalsWorld) check() error {
	all, byClass := w.s.ClusterCounts()
	countedAll, countedByClass := w.s.CountAll()
	if all != countedAll || !maps.Equal(byClass, countedByClass) {
		return fmt.Errorf("kept totals %+v %+v, a count of the pools %+v %+v", all, byClass, countedAll, countedByClass)
	}
	listedAll, listedByClass := w.listed()
	if all != listedAll || !maps.Equal(byClass, listedByClass) {
		return fmt.Errorf("kept totals %+v %+v, the node lists %+v %+v", all, byClass, listedAll, listedByClass)
	}
	for _, err := range w.s.CheckInvariants() {
		if strings.Contains(err.Error(), "device totals") {
			return err
		}
	}
	return nil
}

// listed counts the devices of every node's list once, and per known class: a device
// whose versions on different nodes are in different classes is in each of them.
func (w *totalsWorld) listed() (store.DeviceCounts, map[string]store.DeviceCounts) {
	type listedDevice struct {
		allocated, assumed bool
		classes            map[string]bool
	}
	devices := map[string]*listedDevice{}
	for n := range w.s.Dump().(devicestore.Dump).Nodes {
		for _, d := range w.s.NodeDevicesList(n) {
			ld := devices[d.ID.String()]
			if ld == nil {
				ld = &listedDevice{allocated: d.Allocated, assumed: d.Assumed, classes: map[string]bool{}}
				devices[d.ID.String()] = ld
			}
			for _, c := range d.Classes {
				ld.classes[c] = true
			}
		}
	}
	var all store.DeviceCounts
	byClass := map[string]store.DeviceCounts{}
	for name := range w.classes {
		byClass[name] = store.DeviceCounts{}
	}
	add := func(c *store.DeviceCounts, d *listedDevice) {
		c.Total++
		if d.allocated {
			c.Allocated++
		} else {
			c.Free++
		}
		if d.assumed {
			c.Assumed++
		}
	}
	for _, d := range devices {
		add(&all, d)
		for class := range d.classes {
			c := byClass[class]
			add(&c, d)
			byClass[class] = c
		}
	}
	return all, byClass
}

// TestRebuildTotals_AConfirmedMiscountIsRebuiltFromTheDevices: once the self-check found the
// kept totals wrong (a device's share that missed a recount, one device too many),
// RebuildTotals recounts them from the devices and says what it corrected; the self-check
// then finds nothing, and the totals follow later events (the device's share was rebuilt
// too, not only the sums). Without a failed check first, RebuildTotals does nothing.
func TestRebuildTotals_AConfirmedMiscountIsRebuiltFromTheDevices(t *testing.T) {
	s := newStore(t)
	s.AddNode(node("n1"))
	s.AddDeviceClass(makeClass("gpus", `device.driver == "gpu.example.com"`))
	s.AddResourceSlice(makeSlice("s", gpu, "n1", 1, 1, devs("gpu", 4), onNode("n1")))
	claim := makeClaim("ns", "c", result{gpu, "n1", "gpu0", "", false})
	s.AddResourceClaim(claim)
	noViolations(t, s)
	if fixed := s.RebuildTotals(); fixed != nil {
		t.Errorf("rebuilt %q after a check that found nothing", fixed)
	}

	s.MissRecountForTest(gpu, "n1", "gpu0")
	s.MiscountForTest()
	if errs := s.CheckInvariants(); len(errs) == 0 {
		t.Fatal("the self-check found nothing wrong with miscounted totals")
	}
	fixed := s.RebuildTotals()
	want := []string{
		"all devices: {Total:5 Allocated:0 Free:4 Assumed:0}, rebuilt {Total:4 Allocated:1 Free:3 Assumed:0}",
		"DeviceClass gpus: {Total:4 Allocated:0 Free:4 Assumed:0}, rebuilt {Total:4 Allocated:1 Free:3 Assumed:0}",
	}
	if strings.Join(fixed, "\n") != strings.Join(want, "\n") {
		t.Errorf("rebuilt:\n%s\nwant:\n%s", strings.Join(fixed, "\n"), strings.Join(want, "\n"))
	}
	noViolations(t, s)
	if all, byClass := s.ClusterCounts(); all != counts(4, 1) || byClass["gpus"] != counts(4, 1) {
		t.Errorf("after the rebuild: %+v, gpus %+v; want 4 devices, 1 allocated", all, byClass["gpus"])
	}
	if again := s.RebuildTotals(); again != nil {
		t.Errorf("rebuilt again %q without a check finding anything", again)
	}

	s.DeleteResourceClaim(claim)
	noViolations(t, s)
	if all, _ := s.ClusterCounts(); all != counts(4, 0) {
		t.Errorf("after the claim went: %+v, want 4 devices, none allocated", all)
	}
}
