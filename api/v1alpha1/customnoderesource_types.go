package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeResourceProperty is one named property of the node's resources (for example its NUMA
// layout or CPU model), as the node agent reports it.
type NodeResourceProperty struct {
	// Name of the property.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Value lists the values of the property.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Value []string `json:"value,omitempty"`
}

// CustomNodeResourceSpec is what the node agent declares about the node.
type CustomNodeResourceSpec struct {
	// Taints the node agent puts on the best-effort pool of the node.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, size(t.key) > 0)",message="spec.taints: every taint needs a key"
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="spec.taints: a taint's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	Taints []corev1.Taint `json:"taints,omitempty"`
	// NodeResourceProperties describe the node's resources.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	NodeResourceProperties []NodeResourceProperty `json:"nodeResourceProperties,omitempty"`
}

// CNRResources are the reclaimed (best-effort) resources of a node.
type CNRResources struct {
	// Allocatable is the best-effort pool that best-effort pods may use.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)",message="status.resources.allocatable: every quantity must be zero or positive"
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Capacity is the size of the best-effort pool before what is already in use.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)",message="status.resources.capacity: every quantity must be zero or positive"
	Capacity corev1.ResourceList `json:"capacity,omitempty"`
}

// QoSLevel is a class of pods whose usage the node agent reports separately.
// +kubebuilder:validation:Enum=guaranteed;burstable;best-effort
type QoSLevel string

// ResourceUsage is how much CPU and memory something uses.
type ResourceUsage struct {
	// CPU in use.
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// Memory in use.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// QoSLevelUsage is the usage of all pods of one QoS level on the node.
type QoSLevelUsage struct {
	// QoSLevel the usage is for.
	QoSLevel QoSLevel `json:"qosLevel"`
	// Usage of the pods of this level.
	Usage ResourceUsage `json:"usage"`
}

// NodeMetricStatus is the node agent's latest measurement of usage.
type NodeMetricStatus struct {
	// UpdateTime is when the agent measured.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
	// NodeUsage is the usage of the whole node.
	// +optional
	NodeUsage ResourceUsage `json:"nodeUsage,omitempty"`
	// QoSLevels is the usage per QoS level.
	// +optional
	// +listType=map
	// +listMapKey=qosLevel
	// +kubebuilder:validation:MaxItems=3
	QoSLevels []QoSLevelUsage `json:"qosLevels,omitempty"`
}

// CustomNodeResourceStatus is the node as the node agent measures it.
type CustomNodeResourceStatus struct {
	// Resources are the best-effort resources of the node.
	// +optional
	Resources CNRResources `json:"resources,omitempty"`
	// NodeMetricStatus is the latest usage measurement.
	// +optional
	NodeMetricStatus NodeMetricStatus `json:"nodeMetricStatus,omitempty"`
	// Conditions are the latest observations of the node agent's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CustomNodeResource (CNR) reports the reclaimed resources of a node: what guaranteed pods
// requested but do not use, offered to best-effort pods. Its name is the name of the Node.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cnr;mccnr,categories=multicache
// +kubebuilder:printcolumn:name="BE-CPU",type=string,JSONPath=`.status.resources.allocatable.cpu`,description="Best-effort allocatable CPU"
// +kubebuilder:printcolumn:name="BE-Memory",type=string,JSONPath=`.status.resources.allocatable.memory`,description="Best-effort allocatable memory"
// +kubebuilder:printcolumn:name="Updated",type=date,JSONPath=`.status.nodeMetricStatus.updateTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CustomNodeResource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the node agent declares.
	// +optional
	Spec CustomNodeResourceSpec `json:"spec,omitempty"`
	// Status is what the node agent measures.
	// +optional
	Status CustomNodeResourceStatus `json:"status,omitempty"`
}

// CustomNodeResourceList is a list of CustomNodeResources.
//
// +kubebuilder:object:root=true
type CustomNodeResourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CustomNodeResources.
	Items []CustomNodeResource `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CustomNodeResource{}, &CustomNodeResourceList{})
}
