// Package v1alpha1 contains the API types of multicache (group cache.multicache.dev):
// the node as a node-manager agent reports it (NMNode), the reclaimed resources of a node
// (CustomNodeResource), gangs of pods (PodGroup), a descheduler's decisions (Movement) and
// resource holds on a node (Reservation).
//
// +kubebuilder:object:generate=true
// +groupName=cache.multicache.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cache.multicache.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
