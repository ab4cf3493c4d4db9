package stores

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources is an amount of each resource, in the units the scheduler compares: milli-CPU,
// bytes, and counts. cpu, memory and ephemeral storage have fields so that the hot path
// (every pod event) neither allocates nor hashes; the rest (hugepages, extended resources)
// go to Scalar, allocated only when a pod or node has one.
type Resources struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	// Pods is a number of pods: the node's pod capacity, or the pods counted.
	Pods   int64
	Scalar map[corev1.ResourceName]int64
}

// ResourcesFromList converts a ResourceList (only resources a pod can request).
func ResourcesFromList(list corev1.ResourceList) Resources {
	var r Resources
	for name, q := range list {
		r.addQuantity(name, q, 1)
	}
	return r
}

// addQuantity adds sign*q to the resource name.
func (r *Resources) addQuantity(name corev1.ResourceName, q resource.Quantity, sign int64) {
	switch name {
	case corev1.ResourceCPU:
		r.MilliCPU += sign * q.MilliValue()
	case corev1.ResourceMemory:
		r.Memory += sign * q.Value()
	case corev1.ResourceEphemeralStorage:
		r.EphemeralStorage += sign * q.Value()
	case corev1.ResourcePods:
		r.Pods += sign * q.Value()
	default:
		if r.Scalar == nil {
			r.Scalar = make(map[corev1.ResourceName]int64, 1)
		}
		r.Scalar[name] += sign * q.Value()
	}
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

// PodRequests returns what a pod asks of its node: the pod-level resources when set;
// otherwise the larger of (the sum of the regular containers plus the restartable init
// containers, i.e. sidecars) and (each classic init container plus the sidecars started
// before it); plus the pod overhead. Pods counts the pod itself (1). Only requests count;
// limits do not.
func PodRequests(pod *corev1.Pod) Resources {
	var r Resources
	if pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests) > 0 {
		for name, q := range pod.Spec.Resources.Requests {
			r.addQuantity(name, q, 1)
		}
	} else {
		var sidecars Resources
		var initPeak Resources
		for i := range pod.Spec.InitContainers {
			c := &pod.Spec.InitContainers[i]
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				for name, q := range c.Resources.Requests {
					sidecars.addQuantity(name, q, 1)
				}
				continue
			}
			// A classic init container runs alone, next to the sidecars started before it.
			step := sidecars.Clone()
			for name, q := range c.Resources.Requests {
				step.addQuantity(name, q, 1)
			}
			initPeak.maxWith(step)
		}
		for i := range pod.Spec.Containers {
			for name, q := range pod.Spec.Containers[i].Resources.Requests {
				r.addQuantity(name, q, 1)
			}
		}
		r.Add(sidecars)
		r.maxWith(initPeak)
	}
	for name, q := range pod.Spec.Overhead {
		r.addQuantity(name, q, 1)
	}
	r.Pods = 1
	return r
}

// maxWith sets every amount of r to the larger of r's and o's.
func (r *Resources) maxWith(o Resources) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	r.Pods = max(r.Pods, o.Pods)
	for name, v := range o.Scalar {
		if r.Scalar == nil {
			r.Scalar = make(map[corev1.ResourceName]int64, len(o.Scalar))
		}
		r.Scalar[name] = max(r.Scalar[name], v)
	}
}
