package drift

import (
	"context"
	"reflect"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// TestCompare_JobsAreComparedAsOwners: Jobs are a listing of owners keyed "Job/ns/name",
// apart from another owner type of the same namespace and name: a Job the cache missed,
// one it holds stale and one gone from the cluster are each reported, and a ReplicaSet
// of the same name that agrees is not.
func TestCompare_JobsAreComparedAsOwners(t *testing.T) {
	h := newCache(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	job := func(name, rv string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, ResourceVersion: rv}}
	}
	must(h.Add(owner(v1alpha1.OwnerJob, "a", "train", "3")))
	must(h.Add(owner(v1alpha1.OwnerJob, "a", "done", "1")))
	must(h.Add(owner(v1alpha1.OwnerReplicaSet, "a", "new", "2")))
	inf := newFakeInformers()
	inf.add(t, job("train", "4"), job("new", "5"), replicaSet("a", "new", "2"))

	got, err := Compare(context.Background(), h, InformerSource{Informers: inf}, nil)
	must(err)
	want := []Difference{
		{Kind: stores.KindOwner, Key: "Job/a/done", Problem: NotInCluster, CacheVersion: "1"},
		{Kind: stores.KindOwner, Key: "Job/a/new", Problem: MissingFromCache, APIVersion: "5"},
		{Kind: stores.KindOwner, Key: "Job/a/train", Problem: StaleInCache, CacheVersion: "3", APIVersion: "4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if key, ok := jobListing(t).ObjectKey("Job/a/train"); !ok || key.Namespace != "a" || key.Name != "train" {
		t.Errorf("Job/a/train names %v (%v), want a/train", key, ok)
	}
	if _, ok := jobListing(t).ObjectKey("ReplicaSet/a/train"); ok {
		t.Error("the Job listing claims a ReplicaSet's key")
	}
}

func jobListing(t *testing.T) Listing {
	t.Helper()
	for _, l := range Listings {
		if _, ok := l.Object.(*batchv1.Job); ok {
			return l
		}
	}
	t.Fatal("no listing of Jobs")
	return Listing{}
}
