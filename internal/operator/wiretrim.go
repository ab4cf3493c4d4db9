package operator

import (
	"net/http"
	"slices"

	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/wiretrim"
)

// Field paths into the owners' messages (k8s.io/api/{apps,batch}/v1/generated.proto): the
// spec (field 2) of the pod template (PodTemplateSpec field 2) in each owner's spec
// (field 2); the template's metadata (field 1) stays, templateLabels reads it.
var (
	replicaSetTemplateSpec  = wiretrim.Path{2, 3, 2} // ReplicaSetSpec.template = 3
	statefulSetTemplateSpec = wiretrim.Path{2, 3, 2} // StatefulSetSpec.template = 3
	daemonSetTemplateSpec   = wiretrim.Path{2, 2, 2} // DaemonSetSpec.template = 2
	deploymentTemplateSpec  = wiretrim.Path{2, 3, 2} // DeploymentSpec.template = 3
	jobTemplateSpec         = wiretrim.Path{2, 6, 2} // JobSpec.template = 6
)

// trimmedKinds are the built-in kinds the cache watches and what their transforms drop
// that is skipped at decode (see cacheHTTPClient): managedFields of every one
// (DefaultTransform, podTransform and ownerMeta drop them), and of the workload owners the
// pod template's spec (templateLabels keeps only its metadata). TestWireTrim_* decode
// each with and without the trim and compare what the transforms keep.
func trimmedKinds() []wiretrim.Kind {
	mf := []wiretrim.Path{wiretrim.ManagedFields}
	return []wiretrim.Kind{
		{Version: "v1", Resource: "pods", Kind: "Pod", Drop: mf},
		{Version: "v1", Resource: "nodes", Kind: "Node", Drop: mf},
		{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Drop: mf},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices", Kind: "ResourceSlice", Drop: mf},
		{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims", Kind: "ResourceClaim", Drop: mf},
		{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses", Kind: "DeviceClass", Drop: mf},
		{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Drop: slices.Concat(mf, []wiretrim.Path{replicaSetTemplateSpec})},
		{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Drop: slices.Concat(mf, []wiretrim.Path{statefulSetTemplateSpec})},
		{Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", Drop: slices.Concat(mf, []wiretrim.Path{daemonSetTemplateSpec})},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Drop: slices.Concat(mf, []wiretrim.Path{deploymentTemplateSpec})},
		{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", Drop: slices.Concat(mf, []wiretrim.Path{jobTemplateSpec})},
	}
}

// cacheHTTPClient is the HTTP client of the manager's cache only: its protobuf lists and
// watches of trimmedKinds arrive without what the transforms would drop after decoding
// them (package wiretrim), so that it is never decoded. The API reader, the client's
// writes and the siblings' own clients use the manager's client and see whole objects.
func cacheHTTPClient(cfg *rest.Config) (*http.Client, error) {
	c := rest.CopyConfig(cfg)
	c.Wrap(wiretrim.Wrapper(trimmedKinds()...))
	return rest.HTTPClientFor(c)
}
