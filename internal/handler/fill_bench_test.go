package handler

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// fillWorld is `make bench-e2e SIZE=large`'s objects as the cache's informers hand them to
// the feeds (bench/e2e/objects.go, another module, mirrored here): 5,000 nodes with their
// NMNodes and CNRs, a Reservation every 10 nodes; ReplicaSets of 10 pods, one in ten a gang
// with its PodGroup, one in five covered by a PDB; 150,000 pods bound round-robin, one in
// three with a sidecar, requests == limits, their resource lists shared between pods of the
// same content as the operator's podTransform makes them.
type fillWorld struct {
	nodes        []*corev1.Node
	nmNodes      []*v1alpha1.NMNode
	cnrs         []*v1alpha1.CustomNodeResource
	reservations []*v1alpha1.Reservation
	owners       []*store.Owner
	groups       []*v1alpha1.PodGroup
	pdbs         []*policyv1.PodDisruptionBudget
	pods         []*corev1.Pod
}

// The sizes of bench/e2e/size.go at SIZE=large.
const (
	fillNodes, fillPods, fillPodsPerRS, fillPodsPerNamespace = 5000, 150000, 10, 3000
	fillRSPerGroup, fillRSPerPDB, fillNodesPerReservation    = 10, 5, 10
)

func newFillWorld() *fillWorld {
	w := &fillWorld{}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
	}
	for i := range fillNodes {
		name := fmt.Sprintf("node-%05d", i)
		w.nodes = append(w.nodes, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", Labels: map[string]string{
				"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
				"node.kubernetes.io/instance-type": "bench.16xlarge",
			}},
			Status: corev1.NodeStatus{
				Capacity: capacity, Allocatable: capacity, Phase: corev1.NodeRunning,
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		})
		w.nmNodes = append(w.nmNodes, ts.MakeNMNode(name, "64", "256Gi", "62", "252Gi"))
		w.cnrs = append(w.cnrs, ts.MakeCNR(name, "8", "16Gi"))
		if i%fillNodesPerReservation == 0 {
			k := i / fillNodesPerReservation
			r := ts.MakeReservation("bench-00", fmt.Sprintf("rsv-%05d", k), name, "2", "4Gi", "bench.multicache.dev/reservation", fmt.Sprintf("rsv-%05d", k))
			r.Spec.TTLSeconds = ptr.To(int64(86400))
			w.reservations = append(w.reservations, r)
		}
	}
	// shared is podTransform's table: one ResourceList per content.
	shared := map[string]corev1.ResourceList{}
	list := func(cpu, memory string) corev1.ResourceList {
		id := cpu + "/" + memory
		if rl, ok := shared[id]; ok {
			return rl
		}
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		shared[id] = rl
		return rl
	}
	container := func(name, cpu, memory string) corev1.Container {
		rl := list(cpu, memory)
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
	}
	for r := range fillPods / fillPodsPerRS {
		ns, rs := fmt.Sprintf("bench-%02d", r*fillPodsPerRS/fillPodsPerNamespace), fmt.Sprintf("rs-%06d", r)
		rsUID := types.UID("uid-" + rs)
		tier := []string{"web", "api", "batch", "cache"}[r%4]
		w.owners = append(w.owners, &store.Owner{
			Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: rs, UID: rsUID, ResourceVersion: "1",
			Labels: map[string]string{"app": rs, "tier": tier}, Replicas: ptr.To(int32(fillPodsPerRS)),
		})
		if r%fillRSPerPDB == 0 {
			w.pdbs = append(w.pdbs, &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdb-" + rs, UID: types.UID("uid-pdb-" + rs), ResourceVersion: "1"},
				Spec: policyv1.PodDisruptionBudgetSpec{
					MinAvailable: ptr.To(intstr.FromInt32(fillPodsPerRS - 1)),
					Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": rs}},
				},
			})
		}
		gang := r%fillRSPerGroup == 0
		if gang {
			w.groups = append(w.groups, &v1alpha1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-" + rs, UID: types.UID("uid-pg-" + rs), ResourceVersion: "1"},
				Spec:       v1alpha1.PodGroupSpec{MinMember: fillPodsPerRS, ScheduleTimeoutSeconds: ptr.To(int32(600))},
			})
		}
		for slot := range fillPodsPerRS {
			i := r*fillPodsPerRS + slot
			labels := map[string]string{"app": rs, "tier": tier, "pod-template-hash": fmt.Sprintf("h%06d", r)}
			if gang {
				labels[v1alpha1.PodGroupLabel] = "pg-" + rs
			}
			containers := []corev1.Container{container("main", fmt.Sprintf("%dm", 100+100*(slot%5)), fmt.Sprintf("%dMi", 128<<(slot%3)))}
			if slot%3 == 0 {
				containers = append(containers, container("sidecar", "50m", "64Mi"))
			}
			name := fmt.Sprintf("%s-%d", rs, slot)
			w.pods = append(w.pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: ns, Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1", Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: rsUID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
					}},
				},
				Spec:   corev1.PodSpec{NodeName: w.nodes[i%fillNodes].Name, Containers: containers},
				Status: corev1.PodStatus{Phase: corev1.PodPending},
			})
		}
	}
	return w
}

// fillObjects feeds everything but the pods to h, as the feeds do (Sync*).
func (w *fillWorld) fillObjects(b *testing.B, h *Handler) {
	for i, n := range w.nodes {
		must(b, h.Sync(types.NamespacedName{Name: n.Name}, n, true, Current))
		must(b, h.Sync(types.NamespacedName{Name: n.Name}, w.nmNodes[i], true, Current))
		must(b, h.Sync(types.NamespacedName{Name: n.Name}, w.cnrs[i], true, Current))
	}
	for _, r := range w.reservations {
		must(b, h.Sync(types.NamespacedName{Namespace: r.Namespace, Name: r.Name}, r, true, Current))
	}
	for _, o := range w.owners {
		must(b, h.Sync(types.NamespacedName{Namespace: o.Key().Namespace, Name: o.Key().Name}, o, true, Current))
	}
	for _, pg := range w.groups {
		must(b, h.Sync(types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name}, pg, true, Current))
	}
	for _, p := range w.pdbs {
		must(b, h.Sync(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, p, true, Current))
	}
}

// fillPods feeds the pods to h, as the pod feed does (without must, whose b.Helper costs
// a stack walk per pod).
func (w *fillWorld) fillPods(b *testing.B, h *Handler) {
	for _, p := range w.pods {
		if err := h.Sync(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, p, true, Current); err != nil {
			b.Fatal(err)
		}
	}
}

func rusageCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFill_Pods is the in-process part of a large cold start's pods: 150,000 pods of
// bench-e2e's shape through the handler's pod feed entry (Sync) with every store, onto a
// cache that already holds the nodes, owners, PodGroups and PDBs. ns/op, B/op and allocs/op
// are per fill; cpu-ns/pod is the process's CPU per pod (the garbage collector's included),
// the figure a cold start's CPU to full is made of, less the informers' decoding. Run:
// go test -run '^$' -bench BenchmarkFill_Pods -benchmem ./internal/handler
func BenchmarkFill_Pods(b *testing.B) { benchmarkFillPods(b, newFillWorld()) }

// BenchmarkFill_PodsUnsharedLists is BenchmarkFill_Pods with every pod's resource lists its
// own (no podTransform): what a pod costs when the NodeStore's requests memo never hits.
func BenchmarkFill_PodsUnsharedLists(b *testing.B) {
	w := newFillWorld()
	for _, p := range w.pods {
		for i := range p.Spec.Containers {
			r := &p.Spec.Containers[i].Resources
			r.Requests, r.Limits = r.Requests.DeepCopy(), r.Limits.DeepCopy()
		}
	}
	benchmarkFillPods(b, w)
}

func benchmarkFillPods(b *testing.B, w *fillWorld) {
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		h, _ := newQuietHandler(b)
		w.fillObjects(b, h)
		b.StartTimer()
		start := rusageCPU(b)
		w.fillPods(b, h)
		cpu += rusageCPU(b) - start
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/fillPods, "cpu-ns/pod")
}

// BenchmarkFill_Others is the same cold start's other objects (nodes, NMNodes, CNRs,
// Reservations, owners, PodGroups, PDBs) into an empty cache, as their feeds apply them.
func BenchmarkFill_Others(b *testing.B) {
	w := newFillWorld()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		h, _ := newQuietHandler(b)
		b.StartTimer()
		w.fillObjects(b, h)
	}
}
