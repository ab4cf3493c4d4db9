package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=podgroups,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.x-k8s.io,resources=podgroups,verbs=get;list;watch

// PodGroupSourceAPI is the API a PodGroup source is read from: what discovery must find
// served for the source to be watched.
type PodGroupSourceAPI struct {
	Source store.PodGroupSource
	// GroupVersion and Resource are what the API server must serve.
	GroupVersion schema.GroupVersion
	Resource     string
}

// PodGroupSourceAPIs lists the API of every source, in stores.PodGroupSources order.
var PodGroupSourceAPIs = []PodGroupSourceAPI{
	{store.PodGroupSourceMulticache, v1alpha1.GroupVersion, "podgroups"},
	{store.PodGroupSourceNative, schedulingv1alpha3.SchemeGroupVersion, "podgroups"},
	{store.PodGroupSourceSchedulerPlugins, podgroupstore.SchedulerPluginsGVK.GroupVersion(), "podgroups"},
}

// foreignSource is how the groups of a source other than multicache's own are read and
// converted into the cache's one shape (*v1alpha1.PodGroup under a key of its source).
type foreignSource struct {
	source  store.PodGroupSource
	newObj  func() client.Object
	newList func() client.ObjectList
	convert func(client.Object) (*v1alpha1.PodGroup, error)
}

var foreignSources = []foreignSource{
	{
		source:  store.PodGroupSourceNative,
		newObj:  func() client.Object { return &schedulingv1alpha3.PodGroup{} },
		newList: func() client.ObjectList { return &schedulingv1alpha3.PodGroupList{} },
		convert: func(o client.Object) (*v1alpha1.PodGroup, error) {
			return PodGroupFromNative(o.(*schedulingv1alpha3.PodGroup)), nil
		},
	},
	{
		source: store.PodGroupSourceSchedulerPlugins,
		newObj: func() client.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(podgroupstore.SchedulerPluginsGVK)
			return u
		},
		newList: func() client.ObjectList {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(podgroupstore.SchedulerPluginsGVK.GroupVersion().WithKind("PodGroupList"))
			return l
		},
		convert: func(o client.Object) (*v1alpha1.PodGroup, error) {
			return PodGroupFromSchedulerPlugins(o.(*unstructured.Unstructured))
		},
	},
}

// podGroupSourceFeedName is the controller name of the feed of a source other than
// multicache's own (whose feed is "podgroup-feed").
func podGroupSourceFeedName(s store.PodGroupSource) string { return "podgroup-" + string(s) + "-feed" }

// followsPodGroupSource reports whether the options enable a source; nil means multicache's
// own only (an empty, non-nil list: none).
func (o Options) followsPodGroupSource(s store.PodGroupSource) bool {
	if o.PodGroupSources == nil {
		return s == store.PodGroupSourceMulticache
	}
	return slices.Contains(o.PodGroupSources, s)
}

// podGroupSourceFeeds returns the feeds of the enabled sources other than multicache's own.
// Each converts its source's object into the cache's one shape and applies it under the
// store's key (podgroupstore.Key): the handler's last-seen copies and the verify loop's
// repair work as they do for multicache's own groups. An object that cannot be converted is
// reported, not retried: only a new version can fix it.
func podGroupSourceFeeds(log logr.Logger, h *handler.Handler, opts Options) []sourceFeedSpec {
	var out []sourceFeedSpec
	for _, fs := range foreignSources {
		if !opts.followsPodGroupSource(fs.source) {
			continue
		}
		apply := func(_ context.Context, key types.NamespacedName, obj client.Object, d handler.Delivery) (time.Duration, error) {
			var pg *v1alpha1.PodGroup
			if obj != nil {
				converted, err := fs.convert(obj)
				switch {
				case err != nil && d == handler.Deleted:
					// A delete needs only the UID of what goes, whatever its spec says.
					converted = &v1alpha1.PodGroup{}
					converted.UID = obj.GetUID()
				case err != nil:
					report(log, stores.KindPodGroup, fmt.Errorf("%w: %w", store.ErrInvalidObject, err))
					return 0, nil
				}
				pg = converted
			}
			storeKey := podgroupstore.Key(fs.source, key.Namespace, key.Name)
			report(log, stores.KindPodGroup, h.Sync(storeKey, pg, true, d))
			return 0, nil
		}
		out = append(out, sourceFeedSpec{name: podGroupSourceFeedName(fs.source), obj: fs.newObj(), apply: apply})
	}
	return out
}

// sourceFeedSpec is one feed to register.
type sourceFeedSpec struct {
	name  string
	obj   client.Object
	apply applyFunc
}

// DriftListings returns what the drift comparison lists when pod groups come from sources:
// drift.Listings without multicache's own PodGroups unless that source is enabled, and the
// other enabled sources' objects keyed like the store. Nothing is listed for a source that
// is not watched (listing through the informers would start a watch).
func DriftListings(sources []store.PodGroupSource) []drift.Listing {
	opts := Options{PodGroupSources: sources}
	var out []drift.Listing
	for _, l := range drift.Listings {
		if _, own := l.Object.(*v1alpha1.PodGroup); own && !opts.followsPodGroupSource(store.PodGroupSourceMulticache) {
			continue
		}
		out = append(out, l)
	}
	for _, fs := range foreignSources {
		if !opts.followsPodGroupSource(fs.source) {
			continue
		}
		src := fs.source
		out = append(out, drift.NewListing(stores.KindPodGroup, fs.newObj(), fs.newList,
			func(o client.Object) string {
				return podgroupstore.Key(src, o.GetNamespace(), o.GetName()).String()
			},
			func(key string) (client.ObjectKey, bool) {
				ns, rest, ok := strings.Cut(key, "/")
				if !ok {
					return client.ObjectKey{}, false
				}
				from, name := podgroupstore.SourceOf(types.NamespacedName{Namespace: ns, Name: rest})
				return client.ObjectKey{Namespace: ns, Name: name}, from == src
			}))
	}
	return out
}
