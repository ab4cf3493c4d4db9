package nodestore

import (
	"hash/maphash"
	"reflect"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// requestsMemo computes Accounting.PodRequests once per distinct set of inputs. The helper
// builds several ResourceLists per call (a map per container, per sum, per max: 93% of the
// allocations of a pod's add, half its CPU, in BenchmarkFill_Pods), yet the pods of one
// workload hand it the same maps: the operator's podTransform makes every pod list the very
// ResourceList of a given content, and the informers never modify a cached object. The
// memo is keyed on the identity of every map PodRequests reads under kube-scheduler's
// options and on the other fields it reads (listed in requestsKey), so a hit returns what
// a call on the same maps returned. A pod it cannot key (more containers than the key
// holds; DRA node-allocatable claim statuses, read only with that gate) is computed afresh.
// The invariant check recomputes charges without the memo.
//
// It is used under the handler's write lock (stores are), so it needs no lock of its own.
//
// Kept: charging 150,000 pods of bench-e2e's large shape takes 88% less time and
// allocates 96% fewer bytes than calling PodRequests each time
// (BenchmarkRequestsMemo_Fill150000Pods; a memo keyed by UID and resourceVersion would never
// hit on a fill). It rests on the informer handing over the very object the transform
// shared the maps of (TestPodTransform_InformerHandsOverSharedLists fails if not; the memo
// would then miss, never answer wrong) and on the helper reading no input the key leaves
// out (TestRequestsMemo_NoInputIsIgnored fails if it does).
type requestsMemo struct {
	acct store.Accounting
	// entries are the sets of inputs seen and their requests, found by the hash of their key
	// in index: a map keyed by requestsKey itself would allocate every key it holds (the
	// runtime stores keys over 128 bytes out of line). A hash shared by two keys keeps the
	// later one.
	entries []memoEntry
	index   map[uint64]int32
	hash    func(requestsKey) uint64
}

type memoEntry struct {
	key requestsKey
	req store.Resources
}

// maxRequestsMemo bounds the memo: past it, it starts over. It is the size of podTransform's
// table of shared lists, so a cluster whose pods list that many distinct lists still hits.
// The key holds the maps it names (so no other map can take their address): at most this
// many sets of them, nearly all the transform's own.
const maxRequestsMemo = 4096

// maxKeyedContainers is how many containers and init containers together a key holds.
const maxKeyedContainers = 6

// containerInputs is what PodRequests reads of one container with UseStatusResources: its
// spec requests, the allocated and actuated requests of the status of its name, and for an
// init container whether it is restartable (a sidecar).
type containerInputs struct {
	requests, allocated, actuated unsafe.Pointer
	restartable                   bool
}

// requestsKey is every input of PodRequests under podRequestsOptions (Accounting.PodRequests):
// the containers' and init containers' inputs in order; the pod-level requests; the
// overhead; the pod-level status (allocatedResources, whether resources is set, its
// requests); whether a resize is infeasible (the PodResizePending condition). Maps by
// identity. TestRequestsMemo_* guard it against the helper's source.
type requestsKey struct {
	containers            [maxKeyedContainers]containerInputs
	nContainers, nInit    uint8
	podRequests, overhead unsafe.Pointer
	statusAllocated       unsafe.Pointer
	statusResourcesSet    bool
	statusRequests        unsafe.Pointer
	resizeInfeasible      bool
}

func newRequestsMemo(acct store.Accounting) *requestsMemo {
	seed := maphash.MakeSeed()
	return &requestsMemo{acct: acct, index: map[uint64]int32{}, hash: func(k requestsKey) uint64 { return maphash.Comparable(seed, k) }}
}

// podRequests is acct.PodRequests(pod), from the memo when the same inputs were seen.
func (m *requestsMemo) podRequests(pod *corev1.Pod) store.Resources {
	key, ok := m.key(pod)
	if !ok {
		return m.acct.PodRequests(pod)
	}
	h := m.hash(key)
	i, found := m.index[h]
	if found && m.entries[i].key == key {
		return m.entries[i].req.Clone() // Clone copies only Scalar, which few pods have
	}
	req := m.acct.PodRequests(pod)
	if found {
		m.entries[i] = memoEntry{key: key, req: req.Clone()}
		return req
	}
	if len(m.entries) >= maxRequestsMemo {
		clear(m.entries) // lets go of the maps the keys name
		m.entries = m.entries[:0]
		clear(m.index)
	}
	m.index[h] = int32(len(m.entries))
	m.entries = append(m.entries, memoEntry{key: key, req: req.Clone()})
	return req
}

// len is the number of sets of inputs the memo holds.
func (m *requestsMemo) len() int { return len(m.entries) }

// key returns pod's requestsKey, false when it has none (see requestsMemo).
func (m *requestsMemo) key(pod *corev1.Pod) (requestsKey, bool) {
	var k requestsKey
	n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers)
	if n > maxKeyedContainers || (m.acct.DRANodeAllocatableResources && len(pod.Status.NodeAllocatableResourceClaimStatuses) > 0) {
		return k, false
	}
	k.nContainers, k.nInit = uint8(len(pod.Spec.Containers)), uint8(len(pod.Spec.InitContainers))
	i := 0
	for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for c := range cs {
			in := &k.containers[i]
			in.requests = mapID(cs[c].Resources.Requests)
			in.restartable = cs[c].RestartPolicy != nil && *cs[c].RestartPolicy == corev1.ContainerRestartPolicyAlways
			if st := containerStatus(pod, cs[c].Name); st != nil {
				in.allocated = mapID(st.AllocatedResources)
				if st.Resources != nil {
					in.actuated = mapID(st.Resources.Requests)
				}
			}
			i++
		}
	}
	if r := pod.Spec.Resources; r != nil {
		k.podRequests = mapID(r.Requests)
	}
	k.overhead = mapID(pod.Spec.Overhead)
	k.statusAllocated = mapID(pod.Status.AllocatedResources)
	if r := pod.Status.Resources; r != nil {
		k.statusResourcesSet = true
		k.statusRequests = mapID(r.Requests)
	}
	k.resizeInfeasible = resourcehelper.IsPodResizeInfeasible(pod)
	return k, true
}

// containerStatus is the status the helper reads for the container of that name: the first
// of the containers' statuses, then of the init containers'.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, ss := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range ss {
			if ss[i].Name == name {
				return &ss[i]
			}
		}
	}
	return nil
}

// mapID is the identity of a ResourceList: nil for a nil map.
func mapID(rl corev1.ResourceList) unsafe.Pointer {
	if rl == nil {
		return nil
	}
	return reflect.ValueOf(rl).UnsafePointer()
}
