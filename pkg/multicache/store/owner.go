package store

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// Owner is a workload that owns pods, as Owner events carry it: its type and key, and the
// labels of its pod template (what PodDisruptionBudget selectors are matched against).
type Owner struct {
	Type      v1alpha1.OwnerType
	Namespace string
	Name      string
	UID       types.UID
	// ResourceVersion is the workload object's, so a reconcile can tell it changed.
	ResourceVersion string
	// Labels are the labels of the pods the owner creates.
	Labels map[string]string
	// ReserveOnDelete is the owner's multicache.dev/reserve-on-delete annotation (on the
	// object, else on its pod template); "" when it has none.
	ReserveOnDelete string
	// Replicas is the owner's desired count of pods (a ReplicaSet's, StatefulSet's or
	// Deployment's spec.replicas; for a Job, the count of active pods its controller
	// wants); nil when it has none or it is unknown.
	Replicas *int32
	// Controller is the workload that controls this one (a ReplicaSet's Deployment); nil
	// when none.
	Controller *OwnerRef
	// Revision is a ReplicaSet's DeploymentRevisionAnnotation: which of its Deployment's
	// ReplicaSets is the newest; 0 when it has none.
	Revision int64
}

// DeploymentRevisionAnnotation is the annotation the deployment controller numbers a
// Deployment's ReplicaSets with; the highest is the newest.
const DeploymentRevisionAnnotation = "deployment.kubernetes.io/revision"

// OwnerRef names an owner and its UID.
type OwnerRef struct {
	Key OwnerKey
	UID types.UID
}

// OwnerKey identifies an owner.
type OwnerKey struct {
	Type      v1alpha1.OwnerType
	Namespace string
	Name      string
}

// Key returns the owner's key.
func (o *Owner) Key() OwnerKey { return OwnerKey{Type: o.Type, Namespace: o.Namespace, Name: o.Name} }

// String renders the key as Type/namespace/name.
func (k OwnerKey) String() string { return string(k.Type) + "/" + k.Namespace + "/" + k.Name }
