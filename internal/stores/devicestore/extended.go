package devicestore

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
)

// newExtendedResources returns kube-scheduler's own map from extended resource names to
// the DeviceClasses serving them (a class's spec.extendedResourceName, and the implicit
// deviceclass.resource.kubernetes.io/<class>), fed with the store's class events.
func newExtendedResources() *extendedresourcecache.ExtendedResourceCache {
	return extendedresourcecache.NewExtendedResourceCache(logr.Discard())
}

// ExtendedResourceClass returns the DeviceClass that serves an extended resource, as
// kube-scheduler resolves it (DRAExtendedResource, GA in v1.37).
func (s *Store) ExtendedResourceClass(name corev1.ResourceName) (string, bool) {
	if c := s.extended.GetDeviceClass(name); c != nil {
		return c.Name, true
	}
	return "", false
}

// ServedByDRA reports whether a pod's request for a resource is DRA's on a node with this
// allocatable, as kube-scheduler's NodeResourcesFit decides it: the node does not list the
// resource (or lists none of it) and some DeviceClass serves it. Such a request is
// allocated devices of that class, through the claim kube-scheduler creates for the pod
// (pod.status.extendedResourceClaimStatus names it), which the store counts like any claim;
// it is not a request against the node's allocatable. Where the node lists the resource, a
// device plugin serves it as before.
func (s *Store) ServedByDRA(allocatable corev1.ResourceList, name corev1.ResourceName) (string, bool) {
	if q, ok := allocatable[name]; ok && q.Sign() > 0 {
		return "", false
	}
	return s.ExtendedResourceClass(name)
}
