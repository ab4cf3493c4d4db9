package operator

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestUnservedDRA_NamesWhatTheAPIServerLacks: the devices store stays off on an API server
// that serves no resource.k8s.io/v1, or only part of it.
func TestUnservedDRA_NamesWhatTheAPIServerLacks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		served []string
		want   []string
	}{
		{"not served", nil, draResources},
		{"part", []string{"resourceslices"}, []string{"resourceclaims", "deviceclasses"}},
		{"all", draResources, nil},
	} {
		dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
		if tc.served != nil {
			list := &metav1.APIResourceList{GroupVersion: "resource.k8s.io/v1"}
			for _, r := range tc.served {
				list.APIResources = append(list.APIResources, metav1.APIResource{Name: r})
			}
			dc.Resources = []*metav1.APIResourceList{list}
		}
		got, err := unservedDRA(dc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", tc.name, got, tc.want)
		}
	}
}
