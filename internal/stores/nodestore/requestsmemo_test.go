package nodestore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// accountings are the charges the memo must reproduce: kube-scheduler's default gates, and
// with DRANodeAllocatableResources.
var accountings = []store.Accounting{{}, {DRANodeAllocatableResources: true}}

// podGen draws pods whose resource lists come from a small pool, shared between pods as the
// operator's podTransform shares them, so that the memo hits; every field PodRequests reads
// varies.
type podGen struct {
	rng   *rand.Rand
	lists []corev1.ResourceList
}

func newPodGen(seed uint64) *podGen {
	g := &podGen{rng: rand.New(rand.NewPCG(seed, seed))}
	for _, l := range []map[corev1.ResourceName]string{
		{corev1.ResourceCPU: "100m", corev1.ResourceMemory: "128Mi"},
		{corev1.ResourceCPU: "250m", corev1.ResourceMemory: "1.5Gi"},
		{corev1.ResourceCPU: "2", corev1.ResourceMemory: "4Gi", "example.com/gpu": "1"},
		{corev1.ResourceCPU: "1", corev1.ResourceEphemeralStorage: "10Gi", corev1.ResourceHugePagesPrefix + "2Mi": "64Mi"},
		{corev1.ResourceMemory: "3Gi"},
		{corev1.ResourceCPU: "0"},
		{},
	} {
		rl := corev1.ResourceList{}
		for name, q := range l {
			rl[name] = resource.MustParse(q)
		}
		g.lists = append(g.lists, rl)
	}
	return g
}

// list is a pooled list, or nil.
func (g *podGen) list() corev1.ResourceList {
	if g.rng.IntN(4) == 0 {
		return nil
	}
	return g.lists[g.rng.IntN(len(g.lists))]
}

func (g *podGen) requirements() *corev1.ResourceRequirements {
	if g.rng.IntN(3) == 0 {
		return nil
	}
	return &corev1.ResourceRequirements{Requests: g.list(), Limits: g.list()}
}

var containerNames = []string{"a", "b", "c", "d"}

func (g *podGen) pod() *corev1.Pod {
	pod := &corev1.Pod{}
	for range g.rng.IntN(5) {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: containerNames[g.rng.IntN(len(containerNames))], Resources: corev1.ResourceRequirements{Requests: g.list(), Limits: g.list()},
		})
	}
	for range g.rng.IntN(5) {
		c := corev1.Container{Name: containerNames[g.rng.IntN(len(containerNames))], Resources: corev1.ResourceRequirements{Requests: g.list()}}
		switch g.rng.IntN(3) {
		case 0:
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		case 1:
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicy("OnFailure"))
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	pod.Spec.Resources = g.requirements()
	pod.Spec.Overhead = g.list()
	for _, ss := range []*[]corev1.ContainerStatus{&pod.Status.ContainerStatuses, &pod.Status.InitContainerStatuses} {
		for range g.rng.IntN(3) {
			*ss = append(*ss, corev1.ContainerStatus{
				Name: containerNames[g.rng.IntN(len(containerNames))], AllocatedResources: g.list(), Resources: g.requirements(),
			})
		}
	}
	pod.Status.AllocatedResources = g.list()
	pod.Status.Resources = g.requirements()
	if g.rng.IntN(3) == 0 {
		reason := []string{corev1.PodReasonInfeasible, corev1.PodReasonDeferred}[g.rng.IntN(2)]
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: reason}}
	}
	if g.rng.IntN(4) == 0 {
		pod.Status.NodeAllocatableResourceClaimStatuses = []corev1.NodeAllocatableResourceClaimStatus{{
			Containers: []string{"a"},
			Mapping:    []corev1.NodeAllocatableMappedResources{{Name: corev1.ResourceCPU, Quantity: ptr.To(resource.MustParse("3"))}},
		}}
	}
	return pod
}

// TestRequestsMemo_EqualsTheHelperOnRandomPods: whatever pods share, the memo answers what a
// fresh PodRequests answers, and it does hit.
func TestRequestsMemo_EqualsTheHelperOnRandomPods(t *testing.T) {
	for _, acct := range accountings {
		t.Run(fmt.Sprintf("DRANodeAllocatableResources=%v", acct.DRANodeAllocatableResources), func(t *testing.T) {
			g, m := newPodGen(1), newRequestsMemo(acct)
			const pods = 20000
			for i := range pods {
				pod := g.pod()
				got, want := m.podRequests(pod), acct.PodRequests(pod)
				if !got.Equal(want) {
					t.Fatalf("pod %d %+v: memo %v, PodRequests %v", i, pod, got.ResourceList(), want.ResourceList())
				}
				// What it returns is the caller's: changing it changes no later answer.
				if got.Scalar != nil {
					for name := range got.Scalar {
						got.Scalar[name] += 1000
					}
					if again := m.podRequests(pod); !again.Equal(want) {
						t.Fatalf("pod %d: after the caller changed its copy, memo %v, PodRequests %v", i, again.ResourceList(), want.ResourceList())
					}
				}
			}
			if m.len() == 0 || m.len() >= pods/2 {
				t.Errorf("the memo holds %d sets of inputs after %d pods: expected hits", m.len(), pods)
			}
		})
	}
}

// TestRequestsMemo_KeysOfOneHashTakeTurns: with every key hashed alike, the memo still
// answers what PodRequests answers (the last key of a hash is the one it holds).
func TestRequestsMemo_KeysOfOneHashTakeTurns(t *testing.T) {
	g, m := newPodGen(2), newRequestsMemo(store.Accounting{})
	m.hash = func(requestsKey) uint64 { return 42 }
	for i := range 2000 {
		pod := g.pod()
		if got, want := m.podRequests(pod), m.acct.PodRequests(pod); !got.Equal(want) {
			t.Fatalf("pod %d: memo %v, PodRequests %v", i, got.ResourceList(), want.ResourceList())
		}
	}
	if m.len() != 1 {
		t.Errorf("the memo holds %d sets of inputs under one hash, want 1", m.len())
	}
}

// TestRequestsMemo_IsBounded: distinct inputs past the bound start the memo over.
func TestRequestsMemo_IsBounded(t *testing.T) {
	m := newRequestsMemo(store.Accounting{})
	for i := range 3 * maxRequestsMemo {
		rl := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(i+1), resource.DecimalSI)}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Resources: corev1.ResourceRequirements{Requests: rl}}}}}
		if got := m.podRequests(pod); got.MilliCPU != int64(i+1) {
			t.Fatalf("pod %d: memo says %d milli-CPU", i, got.MilliCPU)
		}
		if m.len() > maxRequestsMemo {
			t.Fatalf("the memo holds %d sets of inputs, bound %d", m.len(), maxRequestsMemo)
		}
	}
}

// basePods are pods that set, between them, every input of PodRequests so that changing it
// moves the requests: each call of a builder returns new objects but the same maps.
func basePods() map[string]func() *corev1.Pod {
	rl := func(cpu, memory string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
	small, medium, large, podLevel, status := rl("100m", "128Mi"), rl("500m", "1Gi"), rl("3", "6Gi"), rl("4", "8Gi"), rl("5", "9Gi")
	spec := func() corev1.PodSpec {
		return corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "a", Resources: corev1.ResourceRequirements{Requests: small, Limits: small}},
				{Name: "b", Resources: corev1.ResourceRequirements{Requests: medium, Limits: medium}},
			},
			InitContainers: []corev1.Container{
				{Name: "i", Resources: corev1.ResourceRequirements{Requests: large}},
				{Name: "s", Resources: corev1.ResourceRequirements{Requests: small}, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			},
			Overhead: small,
		}
	}
	containerStatuses := func(pod *corev1.Pod) {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "a", AllocatedResources: large, Resources: &corev1.ResourceRequirements{Requests: medium}},
			{Name: "b", AllocatedResources: small},
		}
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
			{Name: "s", AllocatedResources: medium, Resources: &corev1.ResourceRequirements{Requests: large}},
		}
	}
	claims := func() []corev1.NodeAllocatableResourceClaimStatus {
		return []corev1.NodeAllocatableResourceClaimStatus{{
			Containers: []string{"a"},
			Mapping:    []corev1.NodeAllocatableMappedResources{{Name: corev1.ResourceCPU, Quantity: ptr.To(resource.MustParse("7"))}},
		}}
	}
	return map[string]func() *corev1.Pod{
		"containers only": func() *corev1.Pod { return &corev1.Pod{Spec: spec()} },
		"container statuses": func() *corev1.Pod {
			pod := &corev1.Pod{Spec: spec()}
			containerStatuses(pod)
			return pod
		},
		"resize infeasible": func() *corev1.Pod {
			// Statuses below the spec: an infeasible resize charges them, not the spec.
			pod := &corev1.Pod{Spec: spec()}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", AllocatedResources: small}, {Name: "b", AllocatedResources: small}}
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
			return pod
		},
		"pod-level status resources without requests": func() *corev1.Pod {
			pod := &corev1.Pod{Spec: spec()}
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: podLevel}
			pod.Status.AllocatedResources = status
			pod.Status.Resources = &corev1.ResourceRequirements{Limits: status}
			return pod
		},
		"everything": func() *corev1.Pod {
			pod := &corev1.Pod{Spec: spec()}
			containerStatuses(pod)
			pod.Spec.Resources = &corev1.ResourceRequirements{Requests: podLevel, Limits: podLevel}
			pod.Status.AllocatedResources = status
			pod.Status.Resources = &corev1.ResourceRequirements{Requests: status}
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred}}
			pod.Status.NodeAllocatableResourceClaimStatuses = claims()
			return pod
		},
		"claims": func() *corev1.Pod {
			pod := &corev1.Pod{Spec: spec()}
			pod.Status.NodeAllocatableResourceClaimStatuses = claims()
			return pod
		},
	}
}

// keyMiss is a change of one field of a base pod that moves the pod's requests but not its
// memo key (with erase applied to both keys): the memo would answer the old requests.
type keyMiss struct{ base, change string }

// keyMisses changes each field of every base pod in turn, anywhere in the Pod (every
// string, number, flag, pointer, map and list, as a new object from the informer could),
// and returns the changes the key misses. Maps are replaced, never modified: cached
// objects are immutable. It also checks that the memo, having seen the base pod, answers
// the changed one as a fresh PodRequests does.
func keyMisses(t *testing.T, acct store.Accounting, erase func(*requestsKey)) (misses []keyMiss, moved int) {
	for name, build := range basePods() {
		for i := range mutations(build()) {
			m := newRequestsMemo(acct)
			base, pod := build(), build()
			baseReq := m.podRequests(base)
			what := mutate(pod, i)
			want := acct.PodRequests(pod)
			if got := m.podRequests(pod); erase == nil && !got.Equal(want) {
				t.Errorf("%s, %s: memo %v, PodRequests %v", name, what, got.ResourceList(), want.ResourceList())
			}
			if want.Equal(baseReq) {
				continue
			}
			moved++
			kb, okb := m.key(base)
			kp, okp := m.key(pod)
			if erase != nil {
				erase(&kb)
				erase(&kp)
			}
			if okb && okp && kb == kp {
				misses = append(misses, keyMiss{name, what})
			}
		}
	}
	return misses, moved
}

// TestRequestsMemo_NoInputIsIgnored: no change of a pod that moves its requests leaves its
// key as it was. A field the helper reads (today or after an upgrade) that the key leaves
// out fails here.
func TestRequestsMemo_NoInputIsIgnored(t *testing.T) {
	for _, acct := range accountings {
		t.Run(fmt.Sprintf("DRANodeAllocatableResources=%v", acct.DRANodeAllocatableResources), func(t *testing.T) {
			misses, moved := keyMisses(t, acct, nil)
			for _, m := range misses {
				t.Errorf("%s, %s: the requests moved, the memo key did not", m.base, m.change)
			}
			t.Logf("%d changes moved the requests", moved)
		})
	}
}

// TestRequestsMemo_EveryPartOfTheKeyCounts: with any part of the key left out,
// keyMisses finds a change it misses: the test above would catch a missing input.
func TestRequestsMemo_EveryPartOfTheKeyCounts(t *testing.T) {
	eachContainer := func(f func(*containerInputs)) func(*requestsKey) {
		return func(k *requestsKey) {
			for i := range k.containers {
				f(&k.containers[i])
			}
		}
	}
	for part, erase := range map[string]func(*requestsKey){
		"container requests":   eachContainer(func(c *containerInputs) { c.requests = nil }),
		"container allocated":  eachContainer(func(c *containerInputs) { c.allocated = nil }),
		"container actuated":   eachContainer(func(c *containerInputs) { c.actuated = nil }),
		"restartable":          eachContainer(func(c *containerInputs) { c.restartable = false }),
		"pod-level requests":   func(k *requestsKey) { k.podRequests = nil },
		"overhead":             func(k *requestsKey) { k.overhead = nil },
		"status allocated":     func(k *requestsKey) { k.statusAllocated = nil },
		"status resources set": func(k *requestsKey) { k.statusResourcesSet = false },
		"status requests":      func(k *requestsKey) { k.statusRequests = nil },
		"resize infeasible":    func(k *requestsKey) { k.resizeInfeasible = false },
	} {
		if misses, _ := keyMisses(t, store.Accounting{}, erase); len(misses) == 0 {
			t.Errorf("without the %s, no change is missed: the test cannot tell the key lacks an input", part)
		}
	}
}

// mutations counts the single-field changes mutate can make to pod.
func mutations(pod *corev1.Pod) int {
	w := &fieldWalker{target: -1}
	w.walk(reflect.ValueOf(pod).Elem(), "pod")
	return w.n
}

// mutate makes change i of pod (in walk order) and says what it changed.
func mutate(pod *corev1.Pod, i int) string {
	w := &fieldWalker{target: i}
	w.walk(reflect.ValueOf(pod).Elem(), "pod")
	return w.did
}

// fieldWalker visits every field of a value; at each point a change can be made it counts
// one, and makes the change numbered target.
type fieldWalker struct {
	n, target int
	did       string
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[time.Time]()
)

// point is one possible change: made (by change) when it is the target.
func (w *fieldWalker) point(path, what string, change func()) {
	if w.n == w.target {
		change()
		w.did = path + ": " + what
	}
	w.n++
}

func (w *fieldWalker) walk(v reflect.Value, path string) {
	if w.did != "" {
		return // the change is made: what it replaced is not walked
	}
	switch {
	case v.Type() == quantityType:
		w.point(path, "+1", func() {
			q := v.Interface().(resource.Quantity)
			q.Add(resource.MustParse("1"))
			v.Set(reflect.ValueOf(q))
		})
		return
	case v.Type() == timeType:
		w.point(path, "+1h", func() { v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour))) })
		return
	}
	switch v.Kind() {
	case reflect.String:
		w.point(path, "appended x", func() { v.SetString(v.String() + "x") })
	case reflect.Bool:
		w.point(path, "flipped", func() { v.SetBool(!v.Bool()) })
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.point(path, "+1", func() { v.SetInt(v.Int() + 1) })
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.point(path, "+1", func() { v.SetUint(v.Uint() + 1) })
	case reflect.Float32, reflect.Float64:
		w.point(path, "+1", func() { v.SetFloat(v.Float() + 1) })
	case reflect.Pointer:
		if v.IsNil() {
			w.point(path, "set to a zero value", func() { v.Set(reflect.New(v.Type().Elem())) })
			return
		}
		w.point(path, "set to nil", func() { v.SetZero() })
		if !v.IsNil() {
			w.walk(v.Elem(), path)
		}
	case reflect.Map:
		if v.IsNil() {
			w.point(path, "set to a map of one entry", func() { v.Set(mapWithOneMore(v)) })
			return
		}
		w.point(path, "set to nil", func() { v.SetZero() })
		w.point(path, "replaced by a map with one more entry", func() { v.Set(mapWithOneMore(v)) })
		if v.Type() == reflect.TypeFor[corev1.ResourceList]() {
			w.point(path, "replaced by a list of every quantity +1", func() {
				rl := corev1.ResourceList{}
				for name, q := range v.Interface().(corev1.ResourceList) {
					q = q.DeepCopy()
					q.Add(resource.MustParse("1"))
					rl[name] = q
				}
				v.Set(reflect.ValueOf(rl))
			})
		}
	case reflect.Slice:
		if v.Len() == 0 {
			w.point(path, "given one zero element", func() { v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem()))) })
			return
		}
		n := v.Len()
		w.point(path, "lost its last element", func() { v.Set(v.Slice(0, n-1)) })
		for i := range min(n, v.Len()) {
			w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				w.walk(v.Field(i), path+"."+f.Name)
			}
		}
	}
}

// mapWithOneMore is a new map with m's entries and one more: for a ResourceList, a resource
// the helper charges (cpu, or memory when it has cpu); otherwise the zero key.
func mapWithOneMore(m reflect.Value) reflect.Value {
	out := reflect.MakeMap(m.Type())
	for it := m.MapRange(); it.Next(); {
		out.SetMapIndex(it.Key(), it.Value())
	}
	if m.Type() == reflect.TypeFor[corev1.ResourceList]() {
		name := corev1.ResourceCPU
		if out.MapIndex(reflect.ValueOf(name)).IsValid() {
			name = corev1.ResourceMemory
		}
		if out.MapIndex(reflect.ValueOf(name)).IsValid() {
			name = corev1.ResourceEphemeralStorage
		}
		out.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(resource.MustParse("3")))
		return out
	}
	out.SetMapIndex(reflect.Zero(m.Type().Key()), reflect.Zero(m.Type().Elem()))
	return out
}
