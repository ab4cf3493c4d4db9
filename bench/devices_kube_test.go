package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

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

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

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
		v.byClass[n.Name] = map[string]store.DeviceCounts{}
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
