package operator

import (
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed0f91f25e/multicache/internal/drift"
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
// (DefaultTransform, podTransform and ownerMeta drop them), of the pods the fields only
// the kubelet reads unless wholePods (podfields.go), and of the workload owners the pod
// template's spec (templateLabels keeps only its metadata). TestWireTrim_* decode each
// with and without the trim and compare what the transforms keep.
func trimmedKinds(wholePods bool) []wiretrim.Kind {
	mf := []wiretrim.Path{wiretrim.ManagedFields}
	pod := mf
	if !wholePods {
		pod = slices.Concat(mf, podWirePaths())
	}
	return []wiretrim.Kind{
		{Version: "v1", Resource: "pods", Kind: "Pod", Drop: pod},
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
func cacheHTTPClient(cfg *rest.Config, wholePods bool) (*http.Client, error) {
	c := rest.CopyConfig(cfg)
	c.Wrap(wiretrim.Wrapper(trimmedKinds(wholePods)...))
	return rest.HTTPClientFor(c)
}

// compareReader is the reader of /debug/cache/compare: the manager's uncached reads, with
// managedFields skipped at the wire in the metadata-only lists the comparison makes of
// every kind it lists (it reads names and resource versions only). Half of a listed
// object's metadata is its managedFields, and decoding it inside a process that holds the
// whole cache costs collections of that cache. Kinds the API server does not map are left
// out of the trim (their lists pass whole); the reader falls back to the manager's when
// the client cannot be built.
func compareReader(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, listings []drift.Listing) (client.Reader, error) {
	var kinds []wiretrim.Kind
	for _, l := range listings {
		gvk, err := apiutil.GVKForObject(l.Object, scheme)
		if err != nil {
			continue
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		kinds = append(kinds, wiretrim.Kind{Group: m.Resource.Group, Version: m.Resource.Version, Resource: m.Resource.Resource,
			Kind: "PartialObjectMetadata", APIVersion: metav1.SchemeGroupVersion.String(), Drop: []wiretrim.Path{wiretrim.ManagedFields}})
	}
	c := rest.CopyConfig(cfg)
	c.Wrap(wiretrim.Wrapper(kinds...))
	httpClient, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	return client.New(c, client.Options{Scheme: scheme, Mapper: mapper, HTTPClient: httpClient})
}

// compareStream is the source of /debug/cache/compare when it reads keys and versions
// only (a whole replica): the metadata lists read as they arrive through httpClient, and
// api (compareReader) for what it reads again.
func compareStream(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, mapper meta.RESTMapper, api client.Reader) (drift.Source, error) {
	return drift.NewMetadataStream(cfg, httpClient, scheme, mapper, drift.APISource{Reader: api, MetadataScheme: scheme})
}
