package bench

import (
	"errors"
	"math/rand/v2"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// devView is one side's answer: per node, the devices it has and which are allocated, and
// per node and class the counts; the allocated devices of the whole cluster.
type devView struct {
	published  map[string]sets.Set[string]              // node -> device IDs
	incomplete map[string]sets.Set[string]              // node -> pools that fail (incomplete or invalid)
	byClass    map[string]map[string]store.DeviceCounts // node -> class -> counts
	allocated  sets.Set[string]                         // cluster-wide
	consumed   map[string]string                        // device -> its shares' consumed capacity, rendered
}

func newDevView() devView {
	return devView{published: map[string]sets.Set[string]{}, incomplete: map[string]sets.Set[string]{}, byClass: map[string]map[string]store.DeviceCounts{}, allocated: sets.New[string](), consumed: map[string]string{}}
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
		adds = append(adds, func() error { return h.Add(n) })
		relabelled := n.DeepCopy()
		relabelled.Labels["rack"] = "c"
		churn = append(churn,
			func() error { return errors.Join(h.Update(n, relabelled), h.Update(relabelled, n)) },
			func() error { return errors.Join(h.Delete(n), h.Add(n)) })
	}
	for _, s := range w.slices {
		adds = append(adds, func() error { return h.Add(s) })
		changed := s.DeepCopy()
		changed.Spec.Pool.Generation++
		changed.Spec.Devices = changed.Spec.Devices[:len(changed.Spec.Devices)-1]
		churn = append(churn,
			func() error { return errors.Join(h.Update(s, changed), h.Update(changed, s)) },
			func() error { return errors.Join(h.Delete(s), h.Add(s)) })
	}
	for _, c := range w.claims {
		adds = append(adds, func() error { return h.Add(c) })
		deallocated := c.DeepCopy()
		deallocated.Status.Allocation = nil
		churn = append(churn,
			func() error {
				return errors.Join(h.Update(c, deallocated), h.Update(deallocated, c))
			},
			func() error { return errors.Join(h.Delete(c), h.Add(c)) })
	}
	for _, c := range w.classes {
		adds = append(adds, func() error { return h.Add(c) })
		other := c.DeepCopy()
		other.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "nic.example.com"`}}}
		churn = append(churn,
			func() error { return errors.Join(h.Update(c, other), h.Update(other, c)) },
			func() error { return errors.Join(h.Delete(c), h.Add(c)) })
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
			v.byClass[n.Name] = map[string]store.DeviceCounts{}
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
	if !h.ReadStore(stores.DeviceStoreName, func(s store.Store) { read(s.(*devicestore.Store)) }) {
		t.Fatal("the devices store is not enabled")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
