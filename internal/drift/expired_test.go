package drift

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// expiringSource is fakeSource whose first listings of pods, `expire` of them, give one
// object (a pod the cluster no longer holds) and then fail 410 Expired, as a listing whose
// continue token was compacted away does between two pages.
type expiringSource struct {
	*fakeSource
	expire, listed int
}

func (s *expiringSource) Each(ctx context.Context, l Listing, fn func(client.Object) error) error {
	if reflect.TypeOf(l.Object) == podType {
		s.listed++
		if s.expire > 0 {
			s.expire--
			if err := fn(objectOf(l, client.ObjectKey{Namespace: "ns", Name: "gone"}, "9")); err != nil {
				return err
			}
			return apierrors.NewResourceExpired("the continue token is too old")
		}
	}
	return s.fakeSource.Each(ctx, l, fn)
}

// TestCompare_AnExpiredListingIsListedAgainWithoutWhatItGathered: through the maps (a
// cache that is no VersionReader, the path of a sub-cluster or a shard), a kind whose
// listing expires once is listed again and what the first listing gave is dropped (the pod
// it listed, which the cache lacks, is no difference); a second expiry fails the comparison,
// naming the kind.
func TestCompare_AnExpiredListingIsListedAgainWithoutWhatItGathered(t *testing.T) {
	newSrc := func(expire int) *expiringSource {
		return &expiringSource{fakeSource: &fakeSource{
			listed:  map[reflect.Type]map[string]string{podType: {"ns/a": "1"}},
			current: map[reflect.Type]map[string]string{podType: {"ns/a": "1"}},
		}, expire: expire}
	}
	c := &fakeCache{kinds: []stores.Kind{stores.KindPod}, seen: map[stores.Kind]map[string]string{stores.KindPod: {"ns/a": "1"}}}
	src := newSrc(1)
	diffs, err := Compare(context.Background(), c, src, nil)
	if err != nil || len(diffs) != 0 || src.listed != 2 {
		t.Fatalf("a listing that expired once: listed %d times, differences %v, error %v; want 2 times, none, nil", src.listed, diffs, err)
	}
	src = newSrc(2)
	_, err = Compare(context.Background(), c, src, nil)
	if !apierrors.IsResourceExpired(err) || src.listed != 2 ||
		fmt.Sprint(err) != "the API server's listing of Pod expired twice (410 Gone: the revision it read at was compacted before its last page); "+
			"retry the comparison, when the API server is less busy: listing Pod: the continue token is too old" {
		t.Fatalf("a listing that expired twice: listed %d times, error %v", src.listed, err)
	}
}
