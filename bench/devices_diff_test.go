package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
)

// Sizes of the devices differential run.
const (
	devDiffSeed  = 20261126
	devDiffCases = 150
)

// TestDifferential_DevicesMatchKubeScheduler builds random DRA worlds (nodes with labels;
// drivers with node-local pools, pools for all nodes or a node selector and pools selecting
// nodes per device; several generations, pools missing a slice; devices dedicated or
// allowing multiple allocations) and random claims (dedicated, shared by shareID with
// consumed capacity, admin access, devices of an older generation or of no slice), feeds
// them to multicache's handler, and compares the devices store with kube-scheduler
// v1.37.1's own code on the same objects:
//
//   - the allocated devices with its DRA manager's claim tracker (GatherAllocatedState and
//     ListAllAllocatedDevices over an assume cache holding the claims);
//   - the devices each node has, per pool and per class, with its structured allocator
//     (k8s.io/dynamic-resource-allocation/structured, the one kube-scheduler runs): a claim
//     asking for all devices of a class, one pool at a time, on each node, against no
//     allocated device, gets exactly the devices that pool gives the node; it fails when
//     the pool is incomplete;
//
// and then, per node and per class, total, allocated and free.
func TestDifferential_DevicesMatchKubeScheduler(t *testing.T) {
	r := rand.New(rand.NewPCG(devDiffSeed, devDiffSeed))
	var nodesChecked, poolsChecked, devicesChecked, allocatedChecked, failing, consumedChecked int
	for c := range devDiffCases {
		w := newDeviceWorld(r, "")
		got := feedDevices(t, r, w)
		want := kubeSchedulerDevices(t, w)
		n, p, d, a := compareDevices(t, c, w, got, want)
		nodesChecked, poolsChecked, devicesChecked, allocatedChecked = nodesChecked+n, poolsChecked+p, devicesChecked+d, allocatedChecked+a
		consumedChecked += len(want.consumed)
		for _, pools := range want.incomplete {
			failing += pools.Len()
		}
		if t.Failed() {
			t.Fatalf("case %d diverges (seed %d); the world:\n%s", c, devDiffSeed, w)
		}
	}
	t.Logf("%d random cases: %d nodes, %d (node, pool) pairs (%d incomplete), %d published devices, %d allocated devices, %d shared devices' consumed capacity checked against kube-scheduler v1.37.1",
		devDiffCases, nodesChecked, poolsChecked, failing, devicesChecked, allocatedChecked, consumedChecked)
	if devicesChecked == 0 || allocatedChecked == 0 || failing == 0 || consumedChecked == 0 {
		t.Fatal("the generator produced no device, no allocation, no incomplete pool or no share: the comparison checked too little")
	}
}

// deviceWorld is one random set of DRA objects.
type deviceWorld struct {
	// prefix starts every name; ns is the claims' namespace.
	prefix, ns string
	nodes      []*corev1.Node
	slices     []*resourcev1.ResourceSlice
	claims     []*resourcev1.ResourceClaim
	classes    []*resourcev1.DeviceClass
	pools      []devPool
}

type devPool struct{ driver, pool string }

func (w *deviceWorld) String() string {
	var b strings.Builder
	for _, n := range w.nodes {
		fmt.Fprintf(&b, "node %s %v\n", n.Name, n.Labels)
	}
	for _, s := range w.slices {
		var devs []string
		for _, d := range s.Spec.Devices {
			sel := ""
			switch {
			case d.NodeName != nil:
				sel = "@" + *d.NodeName
			case d.AllNodes != nil:
				sel = "@*"
			}
			if ptr.Deref(d.AllowMultipleAllocations, false) {
				sel += "(multi)"
			}
			devs = append(devs, d.Name+sel)
		}
		fmt.Fprintf(&b, "slice %s %s/%s gen %d of %d nodeName=%v allNodes=%v selector=%v perDevice=%v: %v\n", s.Name, s.Spec.Driver, s.Spec.Pool.Name,
			s.Spec.Pool.Generation, s.Spec.Pool.ResourceSliceCount, ptr.Deref(s.Spec.NodeName, ""), ptr.Deref(s.Spec.AllNodes, false),
			s.Spec.NodeSelector != nil, ptr.Deref(s.Spec.PerDeviceNodeSelection, false), devs)
	}
	for _, c := range w.claims {
		var res []string
		for _, r := range c.Status.Allocation.Devices.Results {
			res = append(res, fmt.Sprintf("%s/%s/%s share=%v admin=%v", r.Driver, r.Pool, r.Device, ptr.Deref(r.ShareID, ""), ptr.Deref(r.AdminAccess, false)))
		}
		fmt.Fprintf(&b, "claim %s: %v\n", c.Name, res)
	}
	return b.String()
}

var devDrivers = []string{"gpu.example.com", "nic.example.com", "fpga.example.com"}

// newDeviceWorld generates a world whose objects the API server accepts, their names
// starting with prefix (and the claims in namespace prefix+"ns").
func newDeviceWorld(r *rand.Rand, prefix string) *deviceWorld {
	w := &deviceWorld{prefix: prefix, ns: prefix + "ns"}
	for i := range 2 + r.IntN(4) {
		w.nodes = append(w.nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%snode-%d", prefix, i), UID: types.UID(fmt.Sprintf("uid-%snode-%d", prefix, i)),
			Labels: map[string]string{"rack": []string{"a", "b"}[r.IntN(2)]},
		}})
	}
	var published []structured.DeviceID // every device some slice names
	multi := map[structured.DeviceID]bool{}
	sliceN := 0
	for _, driver := range devDrivers[:1+r.IntN(len(devDrivers))] {
		var pools []struct {
			name string
			kind int // 0 node-local, 1 all nodes, 2 node selector, 3 per device
			node string
		}
		for _, n := range w.nodes {
			if r.IntN(3) > 0 {
				pools = append(pools, struct {
					name string
					kind int
					node string
				}{n.Name, 0, n.Name})
			}
		}
		for k := 1; k <= 3; k++ {
			if r.IntN(2) == 0 {
				pools = append(pools, struct {
					name string
					kind int
					node string
				}{fmt.Sprintf("shared-%d", k), k, ""})
			}
		}
		for _, p := range pools {
			w.pools = append(w.pools, devPool{driver, p.name})
			newest := int64(1 + r.IntN(3))
			for gen := max(1, newest-int64(r.IntN(2))); gen <= newest; gen++ {
				count := int64(1 + r.IntN(3))
				for i := range count {
					if gen == newest && count > 1 && r.IntN(8) == 0 {
						continue // a slice of the newest generation is missing: incomplete
					}
					s := &resourcev1.ResourceSlice{
						ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%sslice-%d", prefix, sliceN), UID: types.UID(fmt.Sprintf("uid-%sslice-%d", prefix, sliceN))},
						Spec: resourcev1.ResourceSliceSpec{
							Driver: driver,
							Pool:   resourcev1.ResourcePool{Name: p.name, Generation: gen, ResourceSliceCount: count},
						},
					}
					sliceN++
					node := p.node
					if gen < newest && p.kind == 0 && r.IntN(3) == 0 {
						node = w.nodes[r.IntN(len(w.nodes))].Name // an older generation elsewhere
					}
					switch p.kind {
					case 0:
						s.Spec.NodeName = ptr.To(node)
					case 1:
						s.Spec.AllNodes = ptr.To(true)
					case 2:
						s.Spec.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
							Key: "rack", Operator: corev1.NodeSelectorOpIn, Values: []string{[]string{"a", "b"}[r.IntN(2)]},
						}}}}}
					case 3:
						s.Spec.PerDeviceNodeSelection = ptr.To(true)
					}
					for d := range 1 + r.IntN(4) {
						dev := resourcev1.Device{
							Name: fmt.Sprintf("g%d-s%d-d%d", gen, i, d),
							Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
								"model": {StringValue: ptr.To([]string{"big", "small"}[r.IntN(2)])},
							},
							Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("8Gi")}},
						}
						if p.kind == 3 {
							if r.IntN(3) == 0 {
								dev.AllNodes = ptr.To(true)
							} else {
								dev.NodeName = ptr.To(w.nodes[r.IntN(len(w.nodes))].Name)
							}
						}
						id := structured.MakeDeviceID(driver, p.name, dev.Name)
						if r.IntN(4) == 0 {
							dev.AllowMultipleAllocations = ptr.To(true)
							multi[id] = true
						}
						s.Spec.Devices = append(s.Spec.Devices, dev)
						published = append(published, id)
					}
					w.slices = append(w.slices, s)
				}
			}
		}
	}
	w.classes = []*resourcev1.DeviceClass{
		devClass(prefix + "everything"),
		devClass(prefix+"gpus", `device.driver == "gpu.example.com"`),
		devClass(prefix+"big", `device.attributes[device.driver].model == "big"`),
		devClass(prefix+"big-multi", `device.attributes[device.driver].model == "big"`, `device.allowMultipleAllocations`),
	}
	for i := range r.IntN(12) {
		claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: fmt.Sprintf("claim-%d", i), UID: types.UID(fmt.Sprintf("uid-%sclaim-%d", prefix, i))}}
		claim.Status.Allocation = &resourcev1.AllocationResult{}
		used := sets.New[structured.SharedDeviceID]() // the API refuses a device twice in one claim
		for range 1 + r.IntN(3) {
			var id structured.DeviceID
			if len(published) > 0 && r.IntN(10) > 0 {
				id = published[r.IntN(len(published))]
			} else {
				id = structured.MakeDeviceID(devDrivers[0], "nowhere", "ghost")
			}
			res := resourcev1.DeviceRequestAllocationResult{Request: "req", Driver: id.Driver.String(), Pool: id.Pool.String(), Device: id.Device.String()}
			switch {
			case multi[id] && r.IntN(4) > 0:
				res.ShareID = ptr.To(types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, r.Int64N(1<<40))))
				res.ConsumedCapacity = map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}
			case r.IntN(8) == 0:
				res.Request, res.AdminAccess = "admin", ptr.To(true)
			}
			if shared := structured.MakeSharedDeviceID(id, res.ShareID); !used.Has(shared) {
				used.Insert(shared)
				claim.Status.Allocation.Devices.Results = append(claim.Status.Allocation.Devices.Results, res)
			}
		}
		claim.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: prefix + "everything"}}}
		if slices.ContainsFunc(claim.Status.Allocation.Devices.Results, func(r resourcev1.DeviceRequestAllocationResult) bool { return r.Request == "admin" }) {
			claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, resourcev1.DeviceRequest{Name: "admin",
				Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: prefix + "everything", AdminAccess: ptr.To(true)}})
		}
		w.claims = append(w.claims, claim)
	}
	return w
}

// violations counts the devices held that no slice names, and the devices held alone by
// more than one result (or alone and shared).
func (w *deviceWorld) violations() int {
	named := sets.New[structured.DeviceID]()
	for _, s := range w.slices {
		for _, d := range s.Spec.Devices {
			named.Insert(structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, d.Name))
		}
	}
	alone, shared := map[structured.DeviceID]int{}, map[structured.DeviceID]int{}
	for _, c := range w.claims {
		for _, r := range c.Status.Allocation.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID != nil {
				shared[id]++
			} else {
				alone[id]++
			}
		}
	}
	held := sets.KeySet(alone).Union(sets.KeySet(shared))
	n := 0
	for id := range held {
		if !named.Has(id) {
			n++
		}
		if alone[id] > 1 || (alone[id] == 1 && shared[id] > 0) {
			n++
		}
	}
	return n
}

func devClass(name string, exprs ...string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-class-" + name)}}
	for _, e := range exprs {
		c.Spec.Selectors = append(c.Spec.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: e}})
	}
	return c
}

// devView is one side's answer: per node, the devices it has and which are allocated, and
// per node and class the counts; the allocated devices of the whole cluster.
type devView struct {
	published  map[string]sets.Set[string]              // node -> device IDs
	incomplete map[string]sets.Set[string]              // node -> pools that fail (incomplete or invalid)
	byClass    map[string]map[string]devicestore.Counts // node -> class -> counts
	allocated  sets.Set[string]                         // cluster-wide
	consumed   map[string]string                        // device -> its shares' consumed capacity, rendered
}

func newDevView() devView {
	return devView{published: map[string]sets.Set[string]{}, incomplete: map[string]sets.Set[string]{}, byClass: map[string]map[string]devicestore.Counts{}, allocated: sets.New[string](), consumed: map[string]string{}}
}

// feedDevices feeds a world through multicache's handler: every object added in a random
// order (slices may name nodes not added yet, claims devices not published yet), then a
// random share of them changed and changed back, or deleted and added again, so that the
// store's incremental paths all end where the world is.
func feedDevices(t *testing.T, r *rand.Rand, w *deviceWorld) devView {
	t.Helper()
	h := NewMulticache(nil, stores.NodeStoreName, stores.DeviceStoreName, stores.PodStoreName)
	var adds, churn []func() error
	for _, n := range w.nodes {
		adds = append(adds, func() error { return h.AddNode(n) })
		relabelled := n.DeepCopy()
		relabelled.Labels["rack"] = "c"
		churn = append(churn,
			func() error { return errors.Join(h.UpdateNode(n, relabelled), h.UpdateNode(relabelled, n)) },
			func() error { return errors.Join(h.DeleteNode(n), h.AddNode(n)) })
	}
	for _, s := range w.slices {
		adds = append(adds, func() error { return h.AddResourceSlice(s) })
		changed := s.DeepCopy()
		changed.Spec.Pool.Generation++
		changed.Spec.Devices = changed.Spec.Devices[:len(changed.Spec.Devices)-1]
		churn = append(churn,
			func() error { return errors.Join(h.UpdateResourceSlice(s, changed), h.UpdateResourceSlice(changed, s)) },
			func() error { return errors.Join(h.DeleteResourceSlice(s), h.AddResourceSlice(s)) })
	}
	for _, c := range w.claims {
		adds = append(adds, func() error { return h.AddResourceClaim(c) })
		deallocated := c.DeepCopy()
		deallocated.Status.Allocation = nil
		churn = append(churn,
			func() error {
				return errors.Join(h.UpdateResourceClaim(c, deallocated), h.UpdateResourceClaim(deallocated, c))
			},
			func() error { return errors.Join(h.DeleteResourceClaim(c), h.AddResourceClaim(c)) })
	}
	for _, c := range w.classes {
		adds = append(adds, func() error { return h.AddDeviceClass(c) })
		other := c.DeepCopy()
		other.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "nic.example.com"`}}}
		churn = append(churn,
			func() error { return errors.Join(h.UpdateDeviceClass(c, other), h.UpdateDeviceClass(other, c)) },
			func() error { return errors.Join(h.DeleteDeviceClass(c), h.AddDeviceClass(c)) })
	}
	r.Shuffle(len(adds), func(i, j int) { adds[i], adds[j] = adds[j], adds[i] })
	r.Shuffle(len(churn), func(i, j int) { churn[i], churn[j] = churn[j], churn[i] })
	for _, op := range append(adds, churn[:len(churn)/3]...) {
		must(t, op())
	}
	v := newDevView()
	readDevices(t, h, func(s *devicestore.Store) {
		// The claims are random: some hold devices no slice names, some hold one device
		// alone twice. Each such device is one violation, and there is no other.
		if errs, want := s.CheckInvariants(), w.violations(); len(errs) != want {
			t.Errorf("%d violations, want %d: %v", len(errs), want, errs)
		}
		for id := range s.AllocatedDevices() {
			v.allocated.Insert(id.String())
		}
		for id, c := range s.ConsumedCapacity() {
			v.consumed[id.String()] = renderCapacity(c)
		}
		for _, n := range w.nodes {
			nd, _ := s.Node(n.Name)
			v.published[n.Name] = sets.New[string]()
			v.incomplete[n.Name] = sets.New[string]()
			v.byClass[n.Name] = map[string]devicestore.Counts{}
			for _, d := range s.NodeDevicesList(n.Name) {
				v.published[n.Name].Insert(d.ID.String())
			}
			for key, p := range nd.ByPool {
				if p.Incomplete || p.Invalid {
					v.incomplete[n.Name].Insert(key)
				}
			}
			for class, c := range nd.ByClass {
				if c.Total > 0 {
					v.byClass[n.Name][class] = c
				}
			}
		}
	})
	return v
}

func readDevices(t *testing.T, h *handler.Handler, read func(*devicestore.Store)) {
	t.Helper()
	if !h.ReadStore(stores.DeviceStoreName, func(s stores.Store) { read(s.(*devicestore.Store)) }) {
		t.Fatal("the devices store is not enabled")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// kubeSchedulerDevices asks kube-scheduler's own code.
func kubeSchedulerDevices(t *testing.T, w *deviceWorld) devView {
	t.Helper()
	ctx := klog.NewContext(context.Background(), klog.Background().V(10))
	v := newDevView()

	// Allocated: the DRA manager's claim tracker over an assume cache holding the claims.
	claims := assumecache.NewAssumeCache(klog.Background(), nil, "ResourceClaim", "", nil)
	for _, c := range w.claims {
		assumecache.AddTestObject(claims, c)
	}
	manager := dynamicresources.NewDRAManager(ctx, claims, nil, informers.NewSharedInformerFactory(fake.NewClientset(), 0))
	state, err := manager.ResourceClaims().GatherAllocatedState()
	if err != nil {
		t.Fatalf("GatherAllocatedState: %v", err)
	}
	for id := range state.AllocatedDevices {
		v.allocated.Insert(id.String())
	}
	for id := range state.AllocatedSharedDeviceIDs {
		v.allocated.Insert(id.GetDeviceID().String())
	}
	for id, c := range state.AggregatedCapacity {
		if !c.Empty() {
			values := map[resourcev1.QualifiedName]resource.Quantity{}
			for name, q := range c {
				values[name] = *q
			}
			v.consumed[id.String()] = renderCapacity(values)
		}
	}
	// ListAllAllocatedDevices, the older call, sees only the devices held alone from the
	// cache (shared ones are in GatherAllocatedState's shared IDs): a subset.
	listed, err := manager.ResourceClaims().ListAllAllocatedDevices()
	if err != nil {
		t.Fatalf("ListAllAllocatedDevices: %v", err)
	}
	for id := range listed {
		if !v.allocated.Has(id.String()) {
			t.Errorf("ListAllAllocatedDevices has %s, GatherAllocatedState does not", id)
		}
	}

	// Published, per node, pool and class: the allocator asked for all devices.
	classes := devClassLister(w.classes)
	features := structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true}
	celCache := cel.NewCache(100, cel.Features{EnableConsumableCapacity: true})
	empty := structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](), AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity: structured.NewConsumedCapacityCollection()}
	for _, n := range w.nodes {
		v.published[n.Name] = sets.New[string]()
		v.incomplete[n.Name] = sets.New[string]()
		v.byClass[n.Name] = map[string]devicestore.Counts{}
		for _, p := range w.pools {
			var poolSlices []*resourcev1.ResourceSlice
			for _, s := range w.slices {
				if s.Spec.Driver == p.driver && s.Spec.Pool.Name == p.pool {
					poolSlices = append(poolSlices, s)
				}
			}
			for _, class := range w.classes {
				alloc, err := structured.NewAllocator(ctx, features, empty, classes, poolSlices, celCache)
				if err != nil {
					t.Fatalf("NewAllocator: %v", err)
				}
				results, err := alloc.Allocate(ctx, n, []*resourcev1.ResourceClaim{allDevicesClaim(class.Name)})
				if err != nil {
					if errors.Is(err, context.Canceled) {
						t.Fatal(err)
					}
					v.incomplete[n.Name].Insert(p.driver + "/" + p.pool)
					continue
				}
				c := v.byClass[n.Name][class.Name]
				for _, res := range results {
					for _, d := range res.Devices.Results {
						id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device).String()
						if class.Name == w.prefix+"everything" {
							v.published[n.Name].Insert(id)
						}
						c.Total++
						if v.allocated.Has(id) {
							c.Allocated++
						} else {
							c.Free++
						}
					}
				}
				if c.Total > 0 {
					v.byClass[n.Name][class.Name] = c
				}
			}
		}
	}
	return v
}

// renderCapacity renders consumed capacity canonically, for comparison.
func renderCapacity(c map[resourcev1.QualifiedName]resource.Quantity) string {
	var parts []string
	for name, q := range c {
		if !q.IsZero() {
			parts = append(parts, fmt.Sprintf("%s=%d", name, q.Value()))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// allDevicesClaim asks for every device of a class.
func allDevicesClaim(class string) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "probe", Name: "all-" + class, UID: types.UID("uid-all-" + class)},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name:    "all",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeAll},
		}}}},
	}
}

type devClassLister []*resourcev1.DeviceClass

func (l devClassLister) List() ([]*resourcev1.DeviceClass, error) { return l, nil }

func (l devClassLister) Get(name string) (*resourcev1.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("device class %s not found", name)
}

// compareDevices reports every difference and returns what was compared.
func compareDevices(t *testing.T, c int, w *deviceWorld, got, want devView) (nodes, pools, devices, allocated int) {
	t.Helper()
	if !maps.Equal(got.consumed, want.consumed) {
		t.Errorf("case %d: consumed capacity: multicache %v, kube-scheduler %v", c, got.consumed, want.consumed)
	}
	if !got.allocated.Equal(want.allocated) {
		t.Errorf("case %d: allocated devices: multicache %v, kube-scheduler %v", c, sets.List(got.allocated), sets.List(want.allocated))
	}
	for _, n := range w.nodes {
		nodes++
		pools += len(w.pools)
		name := n.Name
		// An incomplete pool fails kube-scheduler's allocation of every class; multicache
		// flags it on the nodes its slices reach.
		for _, key := range sets.List(want.incomplete[name]) {
			if !got.incomplete[name].Has(key) {
				t.Errorf("case %d, %s: pool %s fails kube-scheduler's allocation, multicache does not flag it", c, name, key)
			}
		}
		for _, key := range sets.List(got.incomplete[name]) {
			if !want.incomplete[name].Has(key) {
				t.Errorf("case %d, %s: multicache flags pool %s, kube-scheduler allocates from it", c, name, key)
			}
		}
		if !got.published[name].Equal(want.published[name]) {
			t.Errorf("case %d, %s: devices: multicache %v, kube-scheduler %v", c, name, sets.List(got.published[name]), sets.List(want.published[name]))
		}
		devices += want.published[name].Len()
		allocated += want.published[name].Intersection(want.allocated).Len()
		classes := slices.Sorted(func(yield func(string) bool) {
			for k := range want.byClass[name] {
				if !yield(k) {
					return
				}
			}
		})
		for k := range got.byClass[name] {
			if _, ok := want.byClass[name][k]; !ok {
				classes = append(classes, k)
			}
		}
		for _, class := range classes {
			if got.byClass[name][class] != want.byClass[name][class] {
				t.Errorf("case %d, %s, class %s: multicache %+v, kube-scheduler %+v", c, name, class, got.byClass[name][class], want.byClass[name][class])
			}
		}
	}
	return nodes, pools, devices, allocated
}
