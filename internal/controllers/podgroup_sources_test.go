package controllers

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

func TestRefeed_PodGroupKeysGoToTheirSourcesFeed(t *testing.T) {
	for _, tc := range []struct {
		key, feed string
		want      types.NamespacedName
	}{
		{"ns/gang", "podgroup-feed", types.NamespacedName{Namespace: "ns", Name: "gang"}},
		{"ns/scheduling.k8s.io/gang", "podgroup-native-feed", types.NamespacedName{Namespace: "ns", Name: "gang"}},
		{"ns/scheduling.x-k8s.io/gang", "podgroup-scheduler-plugins-feed", types.NamespacedName{Namespace: "ns", Name: "gang"}},
	} {
		feed, req, err := feedOfKey(stores.KindPodGroup, tc.key)
		if err != nil || feed != tc.feed || req.NamespacedName != tc.want {
			t.Errorf("%s: feed %q request %v error %v; want %q %v", tc.key, feed, req.NamespacedName, err, tc.feed, tc.want)
		}
	}
}

func TestDriftListings_ListOnlyTheSourcesFollowed(t *testing.T) {
	count := func(sources []store.PodGroupSource) (own, foreign int) {
		for _, l := range DriftListings(sources) {
			if l.Kind != stores.KindPodGroup {
				continue
			}
			if _, ok := l.Object.(*v1alpha1.PodGroup); ok {
				own++
			} else {
				foreign++
			}
		}
		return own, foreign
	}
	for _, tc := range []struct {
		sources      []store.PodGroupSource
		own, foreign int
	}{
		{nil, 1, 0},
		{[]store.PodGroupSource{}, 0, 0},
		{[]store.PodGroupSource{store.PodGroupSourceNative}, 0, 1},
		{slices.Clone(store.PodGroupSources), 1, 2},
	} {
		if own, foreign := count(tc.sources); own != tc.own || foreign != tc.foreign {
			t.Errorf("sources %v: %d own and %d other PodGroup listings, want %d and %d", tc.sources, own, foreign, tc.own, tc.foreign)
		}
	}
}
