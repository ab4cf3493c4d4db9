package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupSpec declares a gang: pods that are only useful when at least MinMember of them
// run together. Members are the pods of the same namespace labelled PodGroupLabel=<name>.
type PodGroupSpec struct {
	// MinMember is how many members must be scheduled together.
	// +kubebuilder:validation:Minimum=1
	MinMember int32 `json:"minMember"`

	// ScheduleTimeoutSeconds is how long the group may wait for MinMember members to be
	// scheduled before it is marked Timeout. Unset means wait forever.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`

	// PriorityClassName is the priority of the group as a whole.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// PodGroupPhase is where a gang is in its life.
// +kubebuilder:validation:Enum=Pending;PreScheduling;Scheduled;Running;Finished;Failed;Timeout
type PodGroupPhase string

const (
	// PodGroupPending means fewer than minMember members exist.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupPreScheduling means enough members exist but fewer than minMember are scheduled.
	PodGroupPreScheduling PodGroupPhase = "PreScheduling"
	// PodGroupScheduled means at least minMember members are assumed or bound to nodes.
	PodGroupScheduled PodGroupPhase = "Scheduled"
	// PodGroupRunning means at least minMember members are running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupFinished means at least minMember members succeeded and none is left to run.
	PodGroupFinished PodGroupPhase = "Finished"
	// PodGroupFailed means so many members failed that minMember can no longer be reached.
	PodGroupFailed PodGroupPhase = "Failed"
	// PodGroupTimeout means scheduleTimeoutSeconds passed before minMember were scheduled.
	PodGroupTimeout PodGroupPhase = "Timeout"
)

// PodGroupStatus is derived by multicache from the group's member pods.
type PodGroupStatus struct {
	// Phase of the group.
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`

	// Pending counts members not yet placed on a node.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Pending int32 `json:"pending"`
	// Scheduled counts members assumed or bound to a node but not yet running.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Scheduled int32 `json:"scheduled"`
	// Running counts running members.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Running int32 `json:"running"`
	// Succeeded counts members that completed successfully.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Succeeded int32 `json:"succeeded"`
	// Failed counts members that failed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=0
	Failed int32 `json:"failed"`

	// ScheduleStartTime is when the group started waiting for its members to be scheduled;
	// the schedule timeout counts from here.
	// +optional
	ScheduleStartTime *metav1.Time `json:"scheduleStartTime,omitempty"`

	// Conditions are the latest observations of the group's state.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Short names: every kind answers to an mc-prefixed one; the shorter ones are kept only
// where no scheduler a cluster runs beside multicache uses them (scheduler-plugins: pg, pgs,
// eq, eqs; Volcano: pg, q, vcjob, vj, jf, jt, hn, nsh, numatopo; Kueue: cq, lq, queue, rf,
// flavor, ac, co, kwl, wpc, topo, mkc, prc; Koordinator: recom, eqp, pmj, sched-exp, and no
// short name on its Reservation, Device or NodeMetric; Katalyst and Godel: kcnr). Read from
// their generated CRDs: kubernetes-sigs/scheduler-plugins config/crd/bases,
// volcano-sh/volcano config/crd/volcano/bases, kubernetes-sigs/kueue
// config/components/crd/bases, koordinator-sh/koordinator config/crd/bases,
// kubewharf/katalyst-api config/crd/bases, kubewharf/godel-scheduler manifests/base/crds.
// With the same plural in two groups, `kubectl get` picks one silently: use the short name
// or the full resource.group name (podgroups.cache.multicache.dev).

// PodGroup is a gang of pods scheduled all-or-nothing.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=mcpg,categories=multicache
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="MinMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="Scheduled",type=integer,JSONPath=`.status.scheduled`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec declares the gang.
	Spec PodGroupSpec `json:"spec"`
	// Status is derived from the members. It defaults to zero counters, so that a group
	// multicache has not seen yet reads (and prints) 0 rather than nothing.
	// +optional
	// +kubebuilder:default={}
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupList is a list of PodGroups.
//
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodGroups.
	Items []PodGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodGroup{}, &PodGroupList{})
}
