package podgroupstore

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A group from another API than multicache's own is kept under a key whose name is
// "<API group>/<name>" (e.g. "scheduling.k8s.io/train"): an object name never holds a "/",
// so a group "a" of namespace "ns" can exist in all three APIs without two of them sharing a
// key, and multicache's own groups keep their plain namespace/name keys (the status writer,
// the Reader and the dump address them as before).
//
// Such a group enters the cache as a *v1alpha1.PodGroup converted from its API's object by
// its feed (internal/controllers, podgroup_convert.go): same name key, UID and resource version, its gang size
// in spec.minMember, its timeout where the API has one. That is the one shape the handler's
// last-seen copies, the store, the snapshots and the drift comparison know.

// SchedulerPluginsGVK is the kind of scheduler-plugins' PodGroup, read as unstructured (no
// dependency on the scheduler-plugins module).
var SchedulerPluginsGVK = schema.GroupVersionKind{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Kind: "PodGroup"}

// SchedulerPluginsLabel on a pod names the scheduler-plugins PodGroup (same namespace) it is
// a member of.
const SchedulerPluginsLabel = "scheduling.x-k8s.io/pod-group"

// sourceRule is one source and its key prefix ("" for multicache's own).
type sourceRule struct {
	source store.PodGroupSource
	prefix string
}

// sourceRules are the sources, in the order of the membership rules in groupsOf.
var sourceRules = [...]sourceRule{
	{store.PodGroupSourceMulticache, ""},
	{store.PodGroupSourceNative, schedulingv1alpha3.GroupName + "/"},
	{store.PodGroupSourceSchedulerPlugins, SchedulerPluginsGVK.Group + "/"},
}

// maxGroups is the most groups one pod can be a member of: one per source.
const maxGroups = len(sourceRules)

// groupKeys are the keys of the groups a pod is a member of (n of them), without allocating.
type groupKeys struct {
	keys [maxGroups]types.NamespacedName
	n    int
}

func (g *groupKeys) slice() []types.NamespacedName { return g.keys[:g.n] }

func (g *groupKeys) has(key types.NamespacedName) bool {
	for _, k := range g.slice() {
		if k == key {
			return true
		}
	}
	return false
}

// groupsOf returns the groups of the enabled sources that pod is a member of, one per
// source's membership rule: multicache's label, Kubernetes' spec.schedulingGroup,
// scheduler-plugins' label. It runs on every pod event, so the rules are read directly (no
// table of functions) and most pods, in no group, cost three lookups.
func (s *Store) groupsOf(pod *corev1.Pod) groupKeys {
	var out groupKeys
	if name := pod.Labels[v1alpha1.PodGroupLabel]; name != "" && s.enabled[0] {
		out.add(pod.Namespace, sourceRules[0].prefix, name)
	}
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" && s.enabled[1] {
		out.add(pod.Namespace, sourceRules[1].prefix, *g.PodGroupName)
	}
	if name := pod.Labels[SchedulerPluginsLabel]; name != "" && s.enabled[2] {
		out.add(pod.Namespace, sourceRules[2].prefix, name)
	}
	return out
}

func (g *groupKeys) add(namespace, prefix, name string) {
	g.keys[g.n] = types.NamespacedName{Namespace: namespace, Name: prefix + name}
	g.n++
}

// Key returns the key under which the store keeps the group name of namespace from source.
func Key(source store.PodGroupSource, namespace, name string) types.NamespacedName {
	for _, r := range sourceRules {
		if r.source == source {
			return types.NamespacedName{Namespace: namespace, Name: r.prefix + name}
		}
	}
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// SourceOf splits a store key into its source and the group's name in that source's API.
func SourceOf(key types.NamespacedName) (store.PodGroupSource, string) {
	for _, r := range sourceRules {
		if r.prefix != "" && strings.HasPrefix(key.Name, r.prefix) {
			return r.source, strings.TrimPrefix(key.Name, r.prefix)
		}
	}
	return store.PodGroupSourceMulticache, key.Name
}
