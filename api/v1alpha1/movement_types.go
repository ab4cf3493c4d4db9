package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TaskInfo names one pod.
type TaskInfo struct {
	// Name of the pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Namespace of the pod.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// UID of the pod.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// Node the pod ran (or runs) on.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node,omitempty"`
}

// OwnerType is the kind of workload that owns pods.
// +kubebuilder:validation:Enum=ReplicaSet;StatefulSet;DaemonSet;Deployment;Job
// +kubebuilder:validation:MaxLength=16
type OwnerType string

const (
	// OwnerReplicaSet is a ReplicaSet.
	OwnerReplicaSet OwnerType = "ReplicaSet"
	// OwnerStatefulSet is a StatefulSet.
	OwnerStatefulSet OwnerType = "StatefulSet"
	// OwnerDaemonSet is a DaemonSet.
	OwnerDaemonSet OwnerType = "DaemonSet"
	// OwnerDeployment is a Deployment.
	OwnerDeployment OwnerType = "Deployment"
	// OwnerJob is a batch/v1 Job.
	OwnerJob OwnerType = "Job"
)

// OwnerInfo names one workload.
type OwnerInfo struct {
	// Type of the workload.
	Type OwnerType `json:"type"`
	// Namespace of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// UID of the workload; when set, only pods of this exact workload match.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// RecommendedNode is where the descheduler suggests recreating pods of an owner.
type RecommendedNode struct {
	// Node name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Node string `json:"node"`
	// DesiredPodCount is how many of the owner's pods should land on the node.
	// +kubebuilder:validation:Minimum=0
	DesiredPodCount int64 `json:"desiredPodCount"`
}

// MovementOwner is the descheduler's suggestion for one owner.
type MovementOwner struct {
	// Owner whose pods were evicted.
	Owner OwnerInfo `json:"owner"`
	// RecommendedNodes are where the evicted pods should go.
	// +optional
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=1024
	RecommendedNodes []RecommendedNode `json:"recommendedNodes,omitempty"`
}

// MovementSpec is a descheduler's decision.
//
// namespace is a CEL keyword, so the rule below spells the field __namespace__.
// +kubebuilder:validation:XValidation:rule="self.owners.all(o, self.owners.exists_one(p, p.owner.type == o.owner.type && p.owner.__namespace__ == o.owner.__namespace__ && p.owner.name == o.owner.name))",message="spec.owners: each owner (type, namespace, name) may appear only once"
type MovementSpec struct {
	// Creator names the descheduler that made the decision.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Creator string `json:"creator"`
	// DeletedTasks are the pods the descheduler evicted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	DeletedTasks []TaskInfo `json:"deletedTasks,omitempty"`
	// Owners are the suggestions per owner.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Owners []MovementOwner `json:"owners"`
}

// MovementNode is what happened on one suggested node.
type MovementNode struct {
	// Node name.
	Node string `json:"node"`
	// ActualPods are the owner's pods that consumed the movement and landed on this node.
	// +optional
	// +listType=atomic
	ActualPods []TaskInfo `json:"actualPods,omitempty"`
}

// MovementOwnerStatus is what happened to one owner's suggestions.
type MovementOwnerStatus struct {
	// Owner the suggestions are for.
	Owner OwnerInfo `json:"owner"`
	// Nodes where the owner's pods landed.
	// +optional
	// +listType=map
	// +listMapKey=node
	Nodes []MovementNode `json:"nodes,omitempty"`
}

// MovementStatus is derived by multicache from the pods that consumed the movement.
type MovementStatus struct {
	// Owners lists, per owner, the pods that consumed the movement per node.
	// +optional
	// +listType=atomic
	Owners []MovementOwnerStatus `json:"owners,omitempty"`
	// NotifiedSchedulers are the components that have seen the movement.
	// +optional
	// +listType=set
	NotifiedSchedulers []string `json:"notifiedSchedulers,omitempty"`
	// Conditions are the latest observations of the movement's state: Followed, Complete.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Movement records a descheduler's decision: which pods it evicted and, per owner, on which
// nodes the replacements should land. Pods that follow it carry MovementNameAnnotation.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=mvt;mcmvt,categories=multicache
// +kubebuilder:printcolumn:name="Creator",type=string,JSONPath=`.spec.creator`
// +kubebuilder:printcolumn:name="Followed",type=string,JSONPath=`.status.conditions[?(@.type=="Followed")].status`
// +kubebuilder:printcolumn:name="Complete",type=string,JSONPath=`.status.conditions[?(@.type=="Complete")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Movement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the decision.
	Spec MovementSpec `json:"spec"`
	// Status is derived from the pods that consumed it.
	// +optional
	Status MovementStatus `json:"status,omitempty"`
}

// MovementList is a list of Movements.
//
// +kubebuilder:object:root=true
type MovementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Movements.
	Items []Movement `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Movement{}, &MovementList{})
}
