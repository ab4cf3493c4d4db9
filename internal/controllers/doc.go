// Package controllers holds one controller-runtime reconciler per watched kind. Each turns
// level-triggered reconciles into exact Add/Update/Delete events on the cache's
// ClusterEventsHandler, and the status writers derive CR status from the cache. Nothing else
// lives here: the state is owned by the cache (internal/handler, internal/stores).
package controllers

// The verbs below are every API call the operator makes, and no other; `make manifests`
// turns them into config/rbac/role.yaml. internal/install's
// TestRBAC_TheOperatorUsesExactlyWhatItIsGranted runs the operator as its service account
// with an audit log and fails on a verb granted and not used, or used and not granted.
// Reads go through the manager's informers (list and watch, never get); status goes
// through a merge patch of the status subresource (never get or update).

// Cache feeds (read only).
// +kubebuilder:rbac:groups="",resources=pods;nodes,verbs=list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets;statefulsets;daemonsets;deployments,verbs=list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=list;watch
// +kubebuilder:rbac:groups=resource.k8s.io,resources=resourceslices;resourceclaims;deviceclasses,verbs=list;watch
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=nmnodes;customnoderesources,verbs=list;watch

// Kinds whose status multicache writes; Expired reservations are deleted after a grace,
// and the leader creates the Reservation that keeps a deleted pod's place.
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=podgroups;movements,verbs=list;watch
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=reservations,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=podgroups/status;movements/status;reservations/status,verbs=patch

// Events recorded on the objects multicache acts on (patch: client-go's recorder turns a
// repeated event into a series).
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
