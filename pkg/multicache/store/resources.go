package store

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Resources is an amount of each resource, in the units the scheduler compares: milli-CPU,
// bytes, and counts. cpu, memory and ephemeral storage have fields so that charging and
// releasing them (every pod event) neither allocates nor hashes; the rest (hugepages,
// extended resources) go to Scalar, allocated only when a pod or node has one.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Pods is a number of pods: the node's pod capacity, or the pods counted.
	Pods   int64
	Scalar map[corev1.ResourceName]int64
}

// ResourcesFromList converts a ResourceList the way kube-scheduler's framework.Resource.Add
// does: cpu in milli-units, everything else in whole units (both rounded up), pods into
// Pods, and only scalar resources (see IsScalarResourceName) into Scalar; any other name is
// ignored.
func ResourcesFromList(list corev1.ResourceList) Resources {
	var r Resources
	for name, q := range list {
		switch name {
		case corev1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case corev1.ResourceMemory:
			r.Memory += q.Value()
		case corev1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		case corev1.ResourcePods:
			r.Pods += q.Value()
		default:
			if !IsScalarResourceName(name) {
				continue
			}
			v := q.Value()
			if v == 0 {
				continue // a missing scalar is zero: no map for it
			}
			if r.Scalar == nil {
				r.Scalar = make(map[corev1.ResourceName]int64, 1)
			}
			r.Scalar[name] += v
		}
	}
	return r
}

// Add adds o to r.
func (r *Resources) Add(o Resources) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.Pods += o.Pods
	for name, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = make(map[corev1.ResourceName]int64, len(o.Scalar))
		}
		r.Scalar[name] += v
	}
}

// Sub subtracts o from r. Scalar entries that reach zero are removed, so that equal
// amounts compare equal however they were reached.
func (r *Resources) Sub(o Resources) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.Pods -= o.Pods
	for name, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = make(map[corev1.ResourceName]int64, len(o.Scalar))
		}
		r.Scalar[name] -= v
		if r.Scalar[name] == 0 {
			delete(r.Scalar, name)
		}
	}
	if len(r.Scalar) == 0 {
		r.Scalar = nil
	}
}

// FloorAtZero sets every negative amount to zero.
func (r *Resources) FloorAtZero() {
	r.MilliCPU = max(r.MilliCPU, 0)
	r.Memory = max(r.Memory, 0)
	r.EphemeralStorage = max(r.EphemeralStorage, 0)
	r.Pods = max(r.Pods, 0)
	for name, v := range r.Scalar {
		if v < 0 {
			r.Scalar[name] = 0
		}
	}
}

// Clone returns a copy that shares nothing with r.
func (r Resources) Clone() Resources {
	if r.Scalar != nil {
		scalar := make(map[corev1.ResourceName]int64, len(r.Scalar))
		for k, v := range r.Scalar {
			scalar[k] = v
		}
		r.Scalar = scalar
	}
	return r
}

// Equal reports whether r and o hold the same amounts (a missing scalar equals zero).
func (r Resources) Equal(o Resources) bool {
	if r.MilliCPU != o.MilliCPU || r.Memory != o.Memory || r.EphemeralStorage != o.EphemeralStorage || r.Pods != o.Pods {
		return false
	}
	for name, v := range r.Scalar {
		if o.Scalar[name] != v {
			return false
		}
	}
	for name, v := range o.Scalar {
		if r.Scalar[name] != v {
			return false
		}
	}
	return true
}

// IsZero reports whether every amount is zero.
func (r Resources) IsZero() bool { return r.Equal(Resources{}) }

// ResourceList converts r for display and for the API (zero amounts are omitted).
func (r Resources) ResourceList() corev1.ResourceList {
	out := corev1.ResourceList{}
	if r.MilliCPU != 0 {
		out[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI)
	}
	if r.Memory != 0 {
		out[corev1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	if r.EphemeralStorage != 0 {
		out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI)
	}
	if r.Pods != 0 {
		out[corev1.ResourcePods] = *resource.NewQuantity(r.Pods, resource.DecimalSI)
	}
	for name, v := range r.Scalar {
		if v != 0 {
			out[name] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}

// podRequestsOptions are the options kube-scheduler v1.37.1 passes to the helper when it
// charges a pod to a node (PodInfo.CalculateResource in pkg/scheduler/framework/types.go),
// with its default feature gates: InPlacePodVerticalScaling (GA, locked on) sets
// UseStatusResources; InPlacePodLevelResourcesVerticalScaling (beta, on) sets
// InPlacePodLevelResourcesVerticalScalingEnabled; PodLevelResources (beta, on) leaves
// SkipPodLevelResources false; DRANodeAllocatableResources (alpha, off) leaves
// UseDRANodeAllocatableResourceClaimStatus false unless Accounting turns it on. Overhead is
// included.
var podRequestsOptions = resourcehelper.PodResourcesOptions{
	UseStatusResources: true,
	InPlacePodLevelResourcesVerticalScalingEnabled: true,
	SkipPodLevelResources:                          false,
	UseDRANodeAllocatableResourceClaimStatus:       false,
}

// Accounting is how pods are charged to nodes where kube-scheduler's own charge depends on
// a feature gate that is off by default: the cluster's gate, mirrored by an operator flag.
// The zero value is kube-scheduler v1.37.1 with its default gates.
type Accounting struct {
	// DRANodeAllocatableResources mirrors kube-scheduler's feature gate of that name (alpha
	// in v1.37, off by default): a pod's requests then include the node-allocatable
	// resources (cpu, memory, hugepages...) its DRA claims were allocated, as
	// pod.status.nodeAllocatableResourceClaimStatuses records them
	// (component-helpers' UseDRANodeAllocatableResourceClaimStatus). Turn it on exactly when
	// the cluster's kube-scheduler has the gate on, or the node views and kube-scheduler
	// disagree on such pods.
	DRANodeAllocatableResources bool
}

// PodRequests returns what a pod asks of its node, exactly as kube-scheduler v1.37.1 charges
// it (NodeInfo.AddPod) with a's feature gates: the requests
// k8s.io/component-helpers/resource.PodRequests computes with kube-scheduler's options
// (containers, init containers and sidecars, pod-level resources replacing the ones they
// name, in-place resizes reported in the status, pod overhead, and with
// DRANodeAllocatableResources the claims' node-allocatable resources), converted once per
// pod by ResourcesFromList. Pods counts the pod itself (1), whatever the pod asks for "pods".
func (a Accounting) PodRequests(pod *corev1.Pod) Resources {
	if pod.Spec.Overhead != nil && pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0 {
		// The helper (v0.37.1) puts the pod-level quantities into its result without copying
		// them, then adds the overhead there: Quantity.Add on an inf.Dec-backed quantity
		// (parsed from "1.5Gi", or from more than 18 digits) changes the *inf.Dec it shares
		// with the pod, so the pod's own spec.resources.requests would grow by the overhead
		// at every call. Pods are shared with the informer: give the helper a copy of what
		// it would change.
		c := *pod
		c.Spec.Resources = &corev1.ResourceRequirements{
			Requests: pod.Spec.Resources.Requests.DeepCopy(), Limits: pod.Spec.Resources.Limits, Claims: pod.Spec.Resources.Claims,
		}
		pod = &c
	}
	opts := podRequestsOptions
	opts.UseDRANodeAllocatableResourceClaimStatus = a.DRANodeAllocatableResources
	r := ResourcesFromList(resourcehelper.PodRequests(pod, opts))
	r.Pods = 1
	return r
}

// PodRequests is Accounting{}.PodRequests: kube-scheduler v1.37.1's charge with its default
// feature gates.
func PodRequests(pod *corev1.Pod) Resources { return Accounting{}.PodRequests(pod) }

// scalarNames caches isExtendedResourceName for the few names clusters use; it stops
// growing at maxScalarNames so that odd names cannot make it grow without bound.
var scalarNames = struct {
	sync.RWMutex
	m map[corev1.ResourceName]bool
}{m: map[corev1.ResourceName]bool{}}

const maxScalarNames = 256

// IsScalarResourceName reports whether kube-scheduler (pkg/scheduler/util
// IsScalarResourceName) accounts a resource other than cpu, memory, ephemeral-storage and
// pods: an extended resource (example.com/gpu), hugepages-*, a name prefixed with
// kubernetes.io/, or attachable-volumes-*.
func IsScalarResourceName(name corev1.ResourceName) bool {
	s := string(name)
	if strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) ||
		strings.Contains(s, corev1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(s, corev1.ResourceAttachableVolumesPrefix) {
		return true
	}
	scalarNames.RLock()
	extended, ok := scalarNames.m[name]
	scalarNames.RUnlock()
	if ok {
		return extended
	}
	// Validating the name is a regular expression match or two: worth remembering.
	extended = isExtendedResourceName(s)
	scalarNames.Lock()
	if len(scalarNames.m) < maxScalarNames {
		scalarNames.m[name] = extended
	}
	scalarNames.Unlock()
	return extended
}

// isExtendedResourceName is v1helper.IsExtendedResourceName for a name not prefixed with
// kubernetes.io/: a name with a domain that is a valid quota name once prefixed with
// "requests.".
func isExtendedResourceName(s string) bool {
	if !strings.Contains(s, "/") || strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(content.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+s)) == 0
}
