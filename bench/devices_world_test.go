package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

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
