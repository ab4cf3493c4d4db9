package store

import (
	"fmt"
	"strings"
)

// PodGroupSource is an API a gang (pod group) can come from. Each source has its own kind
// and its own membership rule; the PodGroupStore keeps the groups of every enabled source
// side by side, with the same counts, phases and snapshot. The values are those of the
// --podgroup-sources flag.
type PodGroupSource string

// The PodGroup sources.
const (
	// PodGroupSourceMulticache is multicache's own PodGroup (cache.multicache.dev/v1alpha1);
	// members are labelled multicache.dev/pod-group=<name>. The only source whose status
	// multicache writes.
	PodGroupSourceMulticache PodGroupSource = "multicache"
	// PodGroupSourceNative is Kubernetes' PodGroup (scheduling.k8s.io/v1alpha3, feature gate
	// GenericWorkload); members name it in spec.schedulingGroup.podGroupName.
	PodGroupSourceNative PodGroupSource = "native"
	// PodGroupSourceSchedulerPlugins is scheduler-plugins' PodGroup
	// (scheduling.x-k8s.io/v1alpha1, as Kubeflow's training operator creates them); members
	// are labelled scheduling.x-k8s.io/pod-group=<name>.
	PodGroupSourceSchedulerPlugins PodGroupSource = "scheduler-plugins"
)

// PodGroupSources lists every source, in the order they are described and resolved.
var PodGroupSources = []PodGroupSource{PodGroupSourceMulticache, PodGroupSourceNative, PodGroupSourceSchedulerPlugins}

// ParsePodGroupSource returns the source named s, or an error listing the known names.
func ParsePodGroupSource(s string) (PodGroupSource, error) {
	for _, src := range PodGroupSources {
		if string(src) == s {
			return src, nil
		}
	}
	known := make([]string, len(PodGroupSources))
	for i, src := range PodGroupSources {
		known[i] = string(src)
	}
	return "", fmt.Errorf("unknown PodGroup source %q; known sources: %s", s, strings.Join(known, ", "))
}
