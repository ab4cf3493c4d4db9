package bench

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

const devAssumeDiffCases = 60

// TestDifferential_AssumedClaimsMatchKubeSchedulersInFlightAllocations: in random DRA worlds
// (newDeviceWorld), about half of the claims are allocated in flight rather than through
// the API: the API shows them unallocated, and a scheduler assumes their allocation,
// multicache with Assumer.AssumeClaim, kube-scheduler v1.37.1 with its claim tracker's
// SignalClaimPendingAllocation (the claim as read) or AssumeClaimAfterAPICall (the claim
// a status update returned, one version newer). The allocated devices and the shares' consumed capacity
// must be the same on both sides (GatherAllocatedState and ListAllAllocatedDevices count
// in-flight allocations), and again once every assumption is forgotten
// (MaybeRemoveClaimPendingAllocation, AssumedClaimRestore). A claim multicache refuses to
// assume (a device another claim holds: ErrDeviceInUse) stays unallocated on both sides:
// kube-scheduler's tracker takes any allocation it is given, and its allocated set is not
// counted per holder (a device two claims hold alone leaves it when one of them releases
// it; multicache keeps it while the other holds it), so the worlds compared give no
// assumed claim a device another claim holds.
func TestDifferential_AssumedClaimsMatchKubeSchedulersInFlightAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(devDiffSeed+1, devDiffSeed+1))
	var assumedChecked, refusedChecked, allocatedChecked int
	for c := range devAssumeDiffCases {
		w := newDeviceWorld(r, "")
		h := NewMulticache(nil, stores.NodeStoreName, stores.DeviceStoreName, stores.PodStoreName)
		for _, n := range w.nodes {
			must(t, h.Add(n))
		}
		for _, s := range w.slices {
			must(t, h.Add(s))
		}
		for _, dc := range w.classes {
			must(t, h.Add(dc))
		}
		// The API's claims first, then the assumptions: a claim multicache refuses to assume
		// stays unallocated on both sides, as the scheduler would not write an allocation
		// the cache refused.
		var inFlight, api, pending []*resourcev1.ResourceClaim
		for _, claim := range w.claims {
			claim = claim.DeepCopy()
			claim.ResourceVersion = "1"
			if r.IntN(2) == 0 {
				must(t, h.Add(claim))
				api = append(api, claim)
			} else {
				must(t, h.Add(unallocatedCopy(claim)))
				pending = append(pending, claim)
			}
		}
		for _, claim := range pending {
			if r.IntN(2) == 0 {
				claim.ResourceVersion = "2" // the claim the status update returned
			}
			switch err := h.AssumeClaim(claim); {
			case err == nil:
				inFlight = append(inFlight, claim)
			case errors.Is(err, store.ErrDeviceInUse):
				refusedChecked++
			default:
				t.Fatalf("case %d: assuming %s: %v", c, claim.Name, err)
			}
		}
		assumedChecked += len(inFlight)

		tracker := kubeSchedulerClaimTracker(t, api, pending, inFlight)
		got, want := allocatedOf(t, h), kubeSchedulerAllocated(t, tracker)
		allocatedChecked += got.allocated.Len()
		compareAllocated(t, c, "in flight", got, want)
		readDevices(t, h, func(s *devicestore.Store) {
			if n := len(s.AssumedClaims()); n != len(inFlight) {
				t.Errorf("case %d: the store marks %d claims assumed, want %d", c, n, len(inFlight))
			}
		})

		for _, claim := range inFlight {
			must(t, h.ForgetClaim(claim))
			if claim.ResourceVersion == "1" {
				tracker.MaybeRemoveClaimPendingAllocation(claim.UID, true)
			} else {
				tracker.AssumedClaimRestore(claim.Namespace, claim.Name)
			}
		}
		compareAllocated(t, c, "forgotten", allocatedOf(t, h), kubeSchedulerAllocated(t, tracker))
		if t.Failed() {
			for _, x := range inFlight {
				t.Logf("in flight: %s rv %s", x.Name, x.ResourceVersion)
			}
			for _, x := range api {
				t.Logf("api: %s rv %s", x.Name, x.ResourceVersion)
			}
			t.Fatalf("case %d diverges (seed %d); the world:\n%s", c, devDiffSeed+1, w)
		}
	}
	t.Logf("%d random cases: %d claims assumed in flight, %d refused (a device another claim holds), %d allocated devices checked against kube-scheduler v1.37.1",
		devAssumeDiffCases, assumedChecked, refusedChecked, allocatedChecked)
	if assumedChecked == 0 || refusedChecked == 0 {
		t.Fatal("the generator produced no assumption or no refusal: the comparison checked too little")
	}
}

func unallocatedCopy(c *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	u := c.DeepCopy()
	u.Status.Allocation = nil
	return u
}

// kubeSchedulerClaimTracker is kube-scheduler's DRA manager's claim tracker: the API's
// claims in its assume cache, the in-flight ones there unallocated, then signalled pending
// (version 1, the claim as read) or assumed after the API call (version 2, the claim the
// status update returned).
func kubeSchedulerClaimTracker(t *testing.T, api, pending, inFlight []*resourcev1.ResourceClaim) claimTracker {
	t.Helper()
	ctx := klog.NewContext(context.Background(), klog.Background())
	claims := assumecache.NewAssumeCache(klog.Background(), nil, "ResourceClaim", "", nil)
	for _, c := range api {
		assumecache.AddTestObject(claims, c)
	}
	for _, c := range pending {
		assumecache.AddTestObject(claims, unallocatedCopy(c))
	}
	tracker := dynamicresources.NewDRAManager(ctx, claims, nil, informers.NewSharedInformerFactory(fake.NewClientset(), 0)).ResourceClaims()
	for _, c := range inFlight {
		var err error
		if c.ResourceVersion == "1" {
			err = tracker.SignalClaimPendingAllocation(c.UID, c)
		} else {
			err = tracker.AssumeClaimAfterAPICall(c)
		}
		if err != nil {
			t.Fatalf("assuming %s in kube-scheduler's tracker: %v", c.Name, err)
		}
	}
	return tracker
}

// claimTracker is the part of kube-scheduler's ResourceClaimTracker the test calls.
type claimTracker interface {
	SignalClaimPendingAllocation(claimUID types.UID, allocatedClaim *resourcev1.ResourceClaim) error
	MaybeRemoveClaimPendingAllocation(claimUID types.UID, forceRemove bool) (deleted bool)
	AssumeClaimAfterAPICall(claim *resourcev1.ResourceClaim) error
	AssumedClaimRestore(namespace, claimName string)
	GatherAllocatedState() (*structured.AllocatedState, error)
	ListAllAllocatedDevices() (sets.Set[structured.DeviceID], error)
}

func kubeSchedulerAllocated(t *testing.T, tracker claimTracker) devView {
	t.Helper()
	v := newDevView()
	state, err := tracker.GatherAllocatedState()
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
	listed, err := tracker.ListAllAllocatedDevices()
	if err != nil {
		t.Fatalf("ListAllAllocatedDevices: %v", err)
	}
	for id := range listed {
		if !v.allocated.Has(id.String()) {
			t.Errorf("ListAllAllocatedDevices has %s, GatherAllocatedState does not", id)
		}
	}
	return v
}

func allocatedOf(t *testing.T, h *handler.Handler) devView {
	t.Helper()
	v := newDevView()
	readDevices(t, h, func(s *devicestore.Store) {
		for id := range s.AllocatedDevices() {
			v.allocated.Insert(id.String())
		}
		for id, c := range s.ConsumedCapacity() {
			v.consumed[id.String()] = renderCapacity(c)
		}
	})
	return v
}

func compareAllocated(t *testing.T, c int, when string, got, want devView) {
	t.Helper()
	if !got.allocated.Equal(want.allocated) {
		t.Errorf("case %d, %s: allocated devices: multicache %v, kube-scheduler %v", c, when, sets.List(got.allocated), sets.List(want.allocated))
	}
	if !maps.Equal(got.consumed, want.consumed) {
		t.Errorf("case %d, %s: consumed capacity: multicache %v, kube-scheduler %v", c, when, got.consumed, want.consumed)
	}
}
