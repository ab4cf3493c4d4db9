package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NMNodeSpec is what the node-manager agent declares about its node.
type NMNodeSpec struct {
	// Taints the node-manager agent puts on the node, in addition to the Node's own.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, size(t.key) > 0)",message="spec.taints: every taint needs a key"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="spec.taints: a taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// NMNodeStatus is the node as the node-manager agent measures it.
type NMNodeStatus struct {
	// ResourceCapacity is the total amount of each resource on the node.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)",message="status.resourceCapacity: every quantity must be zero or positive"
	ResourceCapacity corev1.ResourceList `json:"resourceCapacity,omitempty"`

	// ResourceAllocatable is the part of ResourceCapacity that pods may use; the difference
	// is what the node manager keeps back for itself.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)",message="status.resourceAllocatable: every quantity must be zero or positive"
	ResourceAllocatable corev1.ResourceList `json:"resourceAllocatable,omitempty"`

	// Conditions are the latest observations of the node manager's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NMNode is a node as its node-manager agent reports it. Its name is the name of the Node.
// The cache merges it with the Node: the Node's allocatable minus what the node manager keeps
// back (capacity minus allocatable here) is what guaranteed pods may use.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=nmn;mcnmn,categories=multicache
// +kubebuilder:printcolumn:name="CPU",type=string,JSONPath=`.status.resourceAllocatable.cpu`,description="Allocatable CPU"
// +kubebuilder:printcolumn:name="Memory",type=string,JSONPath=`.status.resourceAllocatable.memory`,description="Allocatable memory"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NMNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the node-manager agent declares.
	// +optional
	Spec NMNodeSpec `json:"spec,omitempty"`
	// Status is what the node-manager agent measures.
	// +optional
	Status NMNodeStatus `json:"status,omitempty"`
}

// NMNodeList is a list of NMNodes.
//
// +kubebuilder:object:root=true
type NMNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NMNodes.
	Items []NMNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NMNode{}, &NMNodeList{})
}
