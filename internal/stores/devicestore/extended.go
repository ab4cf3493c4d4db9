package devicestore

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Extended resources DRA serves (DRAExtendedResource, GA in v1.37) are resolved with
// kube-scheduler's own map from extended resource names to the DeviceClasses serving them
// (a class's spec.extendedResourceName, and the implicit
// deviceclass.resource.kubernetes.io/<class>), fed with the store's class events. The
// NodeStore reads it through CacheHandler.ExtendedResourceClass and is told when it
// changes (CacheHandler.ExtendedResourcesChanged): a pod's request for such a resource, on
// a node whose allocatable lists none of it, is charged to the class's devices through the
// claim, not to the node's allocatable. The store also follows the pods whose requests for
// them kube-scheduler served with a claim (pod.status.extendedResourceClaimStatus), to
// check that the claim holds devices.

// extendedClaim is the claim kube-scheduler made for a bound, running pod's extended
// resources, and the pod's node.
type extendedClaim struct {
	name, node string
}

var _ store.PodHandler = (*Store)(nil)

// namesOf returns the resource names a class event can change in the library's map: the
// class's extendedResourceName and its implicit name (the library writes and deletes no
// other entry for the class).
func namesOf(dc *resourcev1.DeviceClass) []corev1.ResourceName {
	names := []corev1.ResourceName{corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix + dc.Name)}
	if n := dc.Spec.ExtendedResourceName; n != nil {
		names = append(names, corev1.ResourceName(*n))
	}
	return names
}

// ExtendedResourceClass returns the DeviceClass that serves an extended resource, as
// kube-scheduler resolves it (DRAExtendedResource, GA in v1.37).
func (s *Store) ExtendedResourceClass(name corev1.ResourceName) (string, bool) {
	if c := s.extended.GetDeviceClass(name); c != nil {
		return c.Name, true
	}
	return "", false
}

// AddPod records the extended-resource claim of a bound, running pod.
func (s *Store) AddPod(pod *corev1.Pod) {
	st := pod.Status.ExtendedResourceClaimStatus
	if st == nil || pod.Spec.NodeName == "" || store.IsTerminal(pod) {
		return
	}
	s.extendedClaims[store.PodKey(pod)] = extendedClaim{name: st.ResourceClaimName, node: pod.Spec.NodeName}
}

// UpdatePod follows a pod's extended-resource claim.
func (s *Store) UpdatePod(oldPod, newPod *corev1.Pod) {
	if oldPod.Status.ExtendedResourceClaimStatus == nil && newPod.Status.ExtendedResourceClaimStatus == nil {
		return
	}
	s.DeletePod(oldPod)
	s.AddPod(newPod)
}

// DeletePod forgets a pod's extended-resource claim.
func (s *Store) DeletePod(pod *corev1.Pod) {
	if pod.Status.ExtendedResourceClaimStatus != nil {
		delete(s.extendedClaims, store.PodKey(pod))
	}
}

// checkExtendedClaims reports the bound pods whose extended-resource claim holds no
// device: the claim does not exist or is not allocated. Their extended resources are then
// charged to no device (and, as kube-scheduler does, not to the node either).
func (s *Store) checkExtendedClaims() []error {
	var errs []error
	for pod, c := range s.extendedClaims {
		key := types.NamespacedName{Namespace: pod.Namespace, Name: c.name}
		if _, ok := s.claims[key]; !ok {
			errs = append(errs, fmt.Errorf("pod %s on node %s: its extended-resource claim %s (pod.status.extendedResourceClaimStatus) "+
				"does not exist or is not allocated, so no device is charged for its extended resources", pod, c.node, key))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}
