package operator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/controllers"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// howToServe tells, per source, what makes its API served.
var howToServe = map[store.PodGroupSource]string{
	store.PodGroupSourceMulticache:       "install multicache's CRDs (make install, or config/crd)",
	store.PodGroupSourceNative:           "run kube-apiserver with --feature-gates=GenericWorkload=true and --runtime-config=scheduling.k8s.io/v1alpha3=true",
	store.PodGroupSourceSchedulerPlugins: "install scheduler-plugins' PodGroup CRD (podgroups.scheduling.x-k8s.io)",
}

// resolvePodGroupSources decides which PodGroup sources the cache follows, by discovery:
// with --podgroup-sources unset, every source whose API the server serves (a source whose
// API is absent is not watched and logs nothing worse than one info line); with the flag
// set, exactly those, and a source whose API is not served stops start-up with an error
// saying how to serve it. Nil when the PodGroupStore is disabled.
func resolvePodGroupSources(cfg *rest.Config, opts Options, log logr.Logger) ([]store.PodGroupSource, error) {
	if !slices.Contains(opts.Stores, string(stores.PodGroupStoreName)) {
		return nil, nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("podgroup sources: creating a discovery client: %w", err)
	}
	explicit := len(opts.PodGroupSources) > 0
	sources := []store.PodGroupSource{}
	var errs []error
	var absent []string
	for _, api := range controllers.PodGroupSourceAPIs {
		if explicit && !slices.Contains(opts.PodGroupSources, string(api.Source)) {
			continue
		}
		served, err := isServed(dc, api)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("podgroup sources: discovering %s (%s): %w", api.Source, api.GroupVersion, err))
		case served:
			sources = append(sources, api.Source)
		case explicit:
			errs = append(errs, fmt.Errorf("--podgroup-sources=%s: the API server does not serve %s %s; %s, or leave %s out",
				strings.Join(opts.PodGroupSources, ","), api.Resource, api.GroupVersion, howToServe[api.Source], api.Source))
		default:
			absent = append(absent, string(api.Source))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	log.Info("pod groups are read from these sources", "sources", sources, "notServed", absent)
	return sources, nil
}

// isServed reports whether the API server serves the source's resource.
func isServed(dc discovery.DiscoveryInterface, api controllers.PodGroupSourceAPI) (bool, error) {
	list, err := dc.ServerResourcesForGroupVersion(api.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == api.Resource {
			return true, nil
		}
	}
	return false, nil
}

// validatePodGroupSources names every unknown source of --podgroup-sources.
func validatePodGroupSources(names []string) error {
	var errs []error
	for _, n := range names {
		if _, err := store.ParsePodGroupSource(n); err != nil {
			errs = append(errs, fmt.Errorf("--podgroup-sources=%s: %w", strings.Join(names, ","), err))
		}
	}
	return errors.Join(errs...)
}
