package operator

import (
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// draResources are what the devices store reads; the API server must serve all three.
var draResources = []string{"resourceslices", "resourceclaims", "deviceclasses"}

// withoutUnservedDevices leaves the devices store out of the enabled stores when the API
// server does not serve resource.k8s.io/v1 (a cluster older than 1.34, or DRA turned off):
// one info line, and the operator starts without it rather than failing on a feed whose kind
// is not there. Resolved once at start, by discovery, before anything listens.
func withoutUnservedDevices(cfg *rest.Config, opts Options, log logr.Logger) (Options, error) {
	if !slices.Contains(opts.Stores, string(stores.DeviceStoreName)) {
		return opts, nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return opts, fmt.Errorf("devices: creating a discovery client: %w", err)
	}
	missing, err := unservedDRA(dc)
	if err != nil {
		return opts, fmt.Errorf("devices: discovering %s: %w", resourcev1.SchemeGroupVersion, err)
	}
	if len(missing) == 0 {
		return opts, nil
	}
	log.Info("the devices store stays off: the API server does not serve DRA", "groupVersion", resourcev1.SchemeGroupVersion.String(), "missing", missing)
	opts.Stores = slices.DeleteFunc(slices.Clone(opts.Stores), func(s string) bool { return s == string(stores.DeviceStoreName) })
	return opts, nil
}

// unservedDRA lists the DRA resources the API server does not serve.
func unservedDRA(dc discovery.DiscoveryInterface) ([]string, error) {
	list, err := dc.ServerResourcesForGroupVersion(resourcev1.SchemeGroupVersion.String())
	if apierrors.IsNotFound(err) {
		return draResources, nil
	}
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, want := range draResources {
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == want }) {
			missing = append(missing, want)
		}
	}
	return missing, nil
}
