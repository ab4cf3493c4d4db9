package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReservationSpec says what to hold, where, for whom and for how long.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.nodeName) || (has(self.nodeName) && self.nodeName == oldSelf.nodeName)",message="spec.nodeName is immutable once set: delete and recreate the Reservation to move it"
type ReservationSpec struct {
	// NodeName is the node to hold resources on. Empty leaves the reservation Pending until a
	// scheduler sets it; once set it cannot change.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName,omitempty"`

	// Resources to hold on the node.
	// +kubebuilder:validation:MinProperties=1
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == string ? !self[k].startsWith('-') : self[k] >= 0)",message="spec.resources: every quantity must be zero or positive"
	Resources corev1.ResourceList `json:"resources"`

	// PodSelector selects the pods of the reservation's namespace that may consume it. An
	// empty selector ({}) matches every pod of the namespace.
	PodSelector *metav1.LabelSelector `json:"podSelector"`

	// TTLSeconds is how long the resources stay held without a matching pod, counted from
	// when the reservation is charged on its node, at most 30 days. Unset uses the operator's
	// --reservation-default-ttl.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2592000
	TTLSeconds *int64 `json:"ttlSeconds,omitempty"`
}

// ReservationPhase is where a reservation is in its life.
// +kubebuilder:validation:Enum=Pending;Reserved;Matched;Expired
type ReservationPhase string

const (
	// ReservationPending means the reservation has no node yet.
	ReservationPending ReservationPhase = "Pending"
	// ReservationReserved means the resources are held on the node by a placeholder.
	ReservationReserved ReservationPhase = "Reserved"
	// ReservationMatched means a matching pod landed on the node and consumed the held
	// resources; the placeholder is released so nothing is counted twice.
	ReservationMatched ReservationPhase = "Matched"
	// ReservationExpired means the TTL ran out before a pod matched; the placeholder is
	// released and the reservation is deleted after a grace period.
	ReservationExpired ReservationPhase = "Expired"
)

// PodReference names one pod.
type PodReference struct {
	// Namespace of the pod.
	Namespace string `json:"namespace"`
	// Name of the pod.
	Name string `json:"name"`
	// UID of the pod.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// ReservationStatus is derived by multicache.
type ReservationStatus struct {
	// Phase of the reservation.
	// +optional
	Phase ReservationPhase `json:"phase,omitempty"`
	// ReservedAt is when the resources were charged on the node.
	// +optional
	ReservedAt *metav1.Time `json:"reservedAt,omitempty"`
	// ExpiresAt is when the reservation expires unless a pod matches it first.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`
	// CurrentOwner is the pod that consumed the reservation.
	// +optional
	CurrentOwner *PodReference `json:"currentOwner,omitempty"`
	// Conditions are the latest observations of the reservation's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Printer columns: Expires is a time to come, which a date column prints as <invalid>
// (date columns show the age of a past time), so it is a string column showing the time.

// Reservation holds resources on a node for the pods that match it, so that they find room
// when they come.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rsv;mcrsv,categories=multicache
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.spec.nodeName`
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.status.currentOwner.name`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.status.expiresAt`,description="When the reservation expires unless a pod matches it first; empty once Matched (a consumed reservation no longer expires)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Reservation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what to hold.
	Spec ReservationSpec `json:"spec"`
	// Status is derived by multicache.
	// +optional
	Status ReservationStatus `json:"status,omitempty"`
}

// ReservationList is a list of Reservations.
//
// +kubebuilder:object:root=true
type ReservationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Reservations.
	Items []Reservation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Reservation{}, &ReservationList{})
}
