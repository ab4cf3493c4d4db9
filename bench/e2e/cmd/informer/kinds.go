package main

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// The values of -kinds.
const (
	kindsPodsNodes  = "pods,nodes"
	kindsMulticache = "multicache"
)

// watchedKind is one informer and the name its count is served under.
type watchedKind struct {
	name     string
	informer toolscache.SharedIndexInformer
	// own is set for an informer the factory does not start (multicache's CRDs).
	own bool
}

// informersOf returns the informers of kinds, registered on factory (built-in kinds) or
// built on crdConfig (multicache's CRDs, read as JSON like controller-runtime reads a kind
// that is not in client-go's scheme).
//
// "multicache" is every kind multicache watches with its default stores on a cluster that
// serves resource.k8s.io/v1 and no other PodGroup API (internal/controllers/setup.go's
// feeds, the owner feeds of owner_controller.go): pods, nodes, the four workload owners,
// PDBs, the three DRA kinds, and NMNodes, CNRs, PodGroups, Movements and Reservations.
func informersOf(kinds string, factory informers.SharedInformerFactory, crdConfig *rest.Config) ([]watchedKind, error) {
	builtIn := []watchedKind{
		{name: "pods", informer: factory.Core().V1().Pods().Informer()},
		{name: "nodes", informer: factory.Core().V1().Nodes().Informer()},
	}
	switch kinds {
	case kindsPodsNodes:
		return builtIn, nil
	case kindsMulticache:
	default:
		return nil, fmt.Errorf("-kinds: %q is neither %q nor %q", kinds, kindsPodsNodes, kindsMulticache)
	}
	builtIn = append(builtIn,
		watchedKind{name: "replicasets", informer: factory.Apps().V1().ReplicaSets().Informer()},
		watchedKind{name: "statefulsets", informer: factory.Apps().V1().StatefulSets().Informer()},
		watchedKind{name: "daemonsets", informer: factory.Apps().V1().DaemonSets().Informer()},
		watchedKind{name: "deployments", informer: factory.Apps().V1().Deployments().Informer()},
		watchedKind{name: "poddisruptionbudgets", informer: factory.Policy().V1().PodDisruptionBudgets().Informer()},
		watchedKind{name: "resourceslices", informer: factory.Resource().V1().ResourceSlices().Informer()},
		watchedKind{name: "resourceclaims", informer: factory.Resource().V1().ResourceClaims().Informer()},
		watchedKind{name: "deviceclasses", informer: factory.Resource().V1().DeviceClasses().Informer()},
	)
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(crdConfig)
	cfg.GroupVersion = &v1alpha1.GroupVersion
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("the client of %s: %w", v1alpha1.GroupVersion, err)
	}
	crds := []struct {
		resource string
		obj      runtime.Object
	}{
		{"nmnodes", &v1alpha1.NMNode{}},
		{"customnoderesources", &v1alpha1.CustomNodeResource{}},
		{"podgroups", &v1alpha1.PodGroup{}},
		{"movements", &v1alpha1.Movement{}},
		{"reservations", &v1alpha1.Reservation{}},
	}
	out := builtIn
	for _, c := range crds {
		lw := toolscache.NewListWatchFromClient(rc, c.resource, metav1.NamespaceAll, fields.Everything())
		inf := toolscache.NewSharedIndexInformer(lw, c.obj, 0, toolscache.Indexers{})
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return nil, err
		}
		out = append(out, watchedKind{name: c.resource, informer: inf, own: true})
	}
	return out, nil
}
