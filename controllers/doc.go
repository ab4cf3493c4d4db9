// Package controllers holds one controller-runtime reconciler per watched kind. Each turns
// level-triggered reconciles into exact Add/Update/Delete events on the cache's
// ClusterEventsHandler, and the status writers derive CR status from the cache. Nothing else
// lives here: the state is owned by the cache (internal/handler, internal/stores).
package controllers

// The verbs below are every API call the operator makes; `make manifests` turns them into
// config/rbac/role.yaml.

// Cache feeds (read only).
// +kubebuilder:rbac:groups="",resources=pods;nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets;statefulsets;daemonsets;deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=nmnodes;customnoderesources,verbs=get;list;watch

// Kinds whose status multicache writes.
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=podgroups;movements,verbs=get;list;watch
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=reservations,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cache.multicache.dev,resources=podgroups/status;movements/status;reservations/status,verbs=get;update;patch

// Events recorded on the objects multicache acts on.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
