package install

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// namesOfOtherSchedulers are the short names and resource names that the schedulers and
// queues clusters run beside multicache already use (see the comment on PodGroup in
// api/v1alpha1): none may be a short name of ours, or `kubectl get` picks one silently.
var namesOfOtherSchedulers = []string{
	// scheduler-plugins (scheduling.x-k8s.io)
	"pg", "pgs", "podgroup", "podgroups", "eq", "eqs", "elasticquota", "elasticquotas",
	// Volcano (scheduling.volcano.sh, batch.volcano.sh, ...)
	"podgroup-v1beta1", "q", "queue", "queues", "queue-v1beta1", "vcjob", "vj", "cronvcjob", "cronvj", "jf", "jt", "hn", "nsh", "numatopo",
	// Kueue (kueue.x-k8s.io)
	"cq", "lq", "rf", "flavor", "flavors", "wl", "kwl", "kueueworkload", "ac", "co", "wpc", "topo", "mkc", "mkconf", "prc",
	// Koordinator (scheduling.koordinator.sh, slo.koordinator.sh, ...)
	"reservation", "reservations", "device", "devices", "nodemetric", "nodemetrics", "nm", "recom", "eqp", "pmj", "sched-exp",
	// Katalyst and Godel (node.katalyst.kubewharf.io, scheduling.godel.kubewharf.io)
	"kcnr", "customnoderesource", "customnoderesources", "nmnode", "nmnodes", "movement", "movements",
}

// TestDiscovery_CategoryAndShortNamesResolveToMulticache asks the API server's discovery
// what kubectl asks: `kubectl get multicache` lists the five kinds, and every short name
// resolves to ours and collides with no other scheduler's.
func TestDiscovery_CategoryAndShortNamesResolveToMulticache(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion(group + "/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		byName[r.Name] = r
	}
	for _, k := range kinds {
		r, ok := byName[k.plural]
		if !ok {
			t.Errorf("discovery has no %s", k.plural)
			continue
		}
		if !slices.Equal(r.Categories, []string{"multicache"}) {
			t.Errorf("%s: categories %v, want [multicache]", k.plural, r.Categories)
		}
		if !slices.Equal(r.ShortNames, k.shortNames) {
			t.Errorf("%s: short names %v, want %v", k.plural, r.ShortNames, k.shortNames)
		}
		if r.Namespaced != k.namespaced {
			t.Errorf("%s: namespaced = %v, want %v", k.plural, r.Namespaced, k.namespaced)
		}
		for _, s := range r.ShortNames {
			if slices.Contains(namesOfOtherSchedulers, s) {
				t.Errorf("%s: short name %q is another scheduler's", k.plural, s)
			}
		}
	}

	// `kubectl get multicache -A` expands the category through discovery.
	expanded, ok := restmapper.NewDiscoveryCategoryExpander(dc).Expand("multicache")
	if !ok {
		t.Fatal("category multicache does not expand")
	}
	var got, want []string
	for _, gr := range expanded {
		got = append(got, gr.String())
	}
	for _, k := range kinds {
		want = append(want, k.plural+"."+group)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("`kubectl get multicache` lists %v, want %v", got, want)
	}
}

// TestDiscovery_ShortNamesStayOursBesideSchedulerPlugins installs scheduler-plugins'
// PodGroup CRD (short names pg, pgs) beside ours, as a cluster running both has it, and
// resolves names the way kubectl does: pg is theirs, mcpg is ours.
func TestDiscovery_ShortNamesStayOursBesideSchedulerPlugins(t *testing.T) {
	ctx := context.Background()
	theirs := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "podgroups.scheduling.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "scheduling.x-k8s.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "podgroups", Singular: "podgroup", Kind: "PodGroup", ListKind: "PodGroupList", ShortNames: []string{"pg", "pgs"},
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true),
				}},
			}},
		},
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(theirs)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })

	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(name string) (schema.GroupVersionResource, error) {
		resources, err := restmapper.GetAPIGroupResources(dc)
		if err != nil {
			return schema.GroupVersionResource{}, err
		}
		mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(resources), dc, nil)
		return mapper.ResourceFor(schema.GroupVersionResource{Resource: name})
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		gvr, err := resolve("pg")
		if err == nil && gvr.Group == "scheduling.x-k8s.io" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pg never resolved to scheduler-plugins' PodGroup: %v %v", gvr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, k := range kinds {
		for _, s := range k.shortNames {
			gvr, err := resolve(s)
			if err != nil || gvr.Group != group || gvr.Resource != k.plural {
				t.Errorf("%s resolves to %v (%v), want %s.%s", s, gvr, err, k.plural, group)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
