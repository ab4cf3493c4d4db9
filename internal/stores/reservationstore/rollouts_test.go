package reservationstore_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/reservationstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// rollout is Deployment web wanting 3 pods, its ReplicaSet of revision 1 with a pod on each
// of n1, n2 and n3, and n4 empty (room for the surge).
type rollout struct {
	*cluster
	pods map[string]*corev1.Pod
}

func newRollout(t *testing.T) *rollout {
	r := &rollout{cluster: newCluster(t), pods: map[string]*corev1.Pod{}}
	for _, n := range []string{"n2", "n3", "n4"} {
		r.must(r.h.Add(ts.MakeNode(n, "8", "16Gi")))
	}
	r.deployment(3)
	r.replicaSet(1, 3)
	for i, n := range []string{"n1", "n2", "n3"} {
		r.land(fmt.Sprintf("web-1-%d", i+1), 1, n)
	}
	r.clk.Step(time.Minute)
	return r
}

// feed reports an owner as the owner feed does: added, or updated from what it last fed.
func (c *cluster) feed(o *store.Owner) {
	c.t.Helper()
	if last, ok := lastSeenOwner(c.h, o.Key()); ok {
		o.ResourceVersion = last.ResourceVersion + "1"
		c.must(c.h.Update(last, o))
		return
	}
	c.must(c.h.Add(o))
}

// deployment feeds Deployment web (UID dep-uid) wanting n pods.
func (r *rollout) deployment(n int32) {
	o := ts.MakeOwner(v1alpha1.OwnerDeployment, "ns", "web", "app", "web")
	o.UID, o.ReserveOnDelete, o.Replicas = "dep-uid", "true", ptr.To(n)
	r.feed(o)
}

// replicaSet feeds web's ReplicaSet of revision rev (web-<rev>, UID rs-<rev>), annotated
// reserve-on-delete as the deployment controller copies it from the Deployment, wanting n.
func (r *rollout) replicaSet(rev int64, n int32) {
	o := ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", fmt.Sprintf("web-%d", rev), "app", "web")
	o.UID, o.ReserveOnDelete, o.Replicas, o.Revision = types.UID(fmt.Sprintf("rs-%d", rev)), "true", ptr.To(n), rev
	o.Controller = &store.OwnerRef{Key: store.OwnerKey{Type: v1alpha1.OwnerDeployment, Namespace: "ns", Name: "web"}, UID: "dep-uid"}
	r.feed(o)
}

// land reports pod name of the ReplicaSet of revision rev bound to node now.
func (r *rollout) land(name string, rev int64, node string) {
	r.clk.Step(time.Second)
	p := web(name, fmt.Sprint(rev), r.clk.Now(), ts.OnNode(node), ts.OwnedBy("ReplicaSet", fmt.Sprintf("web-%d", rev), fmt.Sprintf("rs-%d", rev)))
	r.pods[name] = p
	r.sync(store.PodKey(p), p)
}

// remove reports pod name gone.
func (r *rollout) remove(name string) {
	r.clk.Step(time.Second)
	r.sync(store.PodKey(r.pods[name]), nil)
}

// hold returns the view of the hold or Reservation kept for pod name; ok is false when
// there is none.
func (r *rollout) hold(name string) (store.Reservation, bool) {
	return r.h.Reservation(types.NamespacedName{Namespace: "ns", Name: reservationstore.ReplacementName(r.pods[name])})
}

// free checks that nothing is charged on node and every invariant holds.
func (r *rollout) free(node string) {
	r.t.Helper()
	if info, _ := r.h.NodeInfo(node); info.Requested.MilliCPU != 0 || info.Reserved.MilliCPU != 0 {
		r.t.Errorf("%s requested %dm reserved %dm, want nothing", node, info.Requested.MilliCPU, info.Reserved.MilliCPU)
	}
	for _, err := range r.h.CheckInvariants() {
		r.t.Error(err)
	}
}

// TestRollout_EachReplacedPodsPlaceIsKeptForTheNewReplicaSet: a rolling update with one
// pod of surge and none unavailable, as the deployment controller runs it: each old
// ReplicaSet's pod goes after the ReplicaSet was scaled down (the ReplicaSet rule alone
// keeps nothing then), and its place is kept for, and taken by, the new ReplicaSet's next
// pod. The last old pod's place is not kept: the new ReplicaSet has its 3 pods.
func TestRollout_EachReplacedPodsPlaceIsKeptForTheNewReplicaSet(t *testing.T) {
	r := newRollout(t)
	held, notNeeded := counter(t, "held"), counter(t, "not_needed")
	r.replicaSet(2, 1)
	r.land("web-2-1", 2, "n4") // the surge: no place was kept for it
	for i, node := range []string{"n1", "n2"} {
		old, next := fmt.Sprintf("web-1-%d", i+1), fmt.Sprintf("web-2-%d", i+2)
		r.replicaSet(1, int32(2-i))
		r.remove(old)
		v, ok := r.hold(old)
		if !ok || v.Phase != v1alpha1.ReservationReserved {
			t.Fatalf("%s gone from %s with %d of 3 new pods landed: hold %v (%s), want one Reserved", old, node, i+1, ok, v.Phase)
		}
		r.replicaSet(2, int32(i+2))
		r.land(next, 2, node)
		if v, _ := r.hold(old); v.Phase != v1alpha1.ReservationMatched || v.Owner == nil || v.Owner.Name != next {
			t.Errorf("%s landed on %s: the hold is %s by %v, want Matched by it", next, node, v.Phase, v.Owner)
		}
	}
	r.replicaSet(1, 0)
	r.remove("web-1-3")
	if _, ok := r.hold("web-1-3"); ok {
		t.Error("the last old pod's place is kept although the new ReplicaSet has its 3 pods")
	}
	if got := counter(t, "held") - held; got != 2 {
		t.Errorf("held counted %v times, want 2", got)
	}
	if got := counter(t, "not_needed") - notNeeded; got != 1 {
		t.Errorf("not_needed counted %v times, want 1", got)
	}
	r.expect("web-2-2 on n1", 2000, 0)
	for _, err := range r.h.CheckInvariants() {
		t.Error(err)
	}
}

// TestRollout_TheNewReplicaSetLandingElsewhereReleasesTheKeptPlaces: the new ReplicaSet's
// pods land on n4 instead of the kept places: once it has the Deployment's 3 pods, the
// places kept on n1 and n2 (pods of the old ReplicaSet) are released.
func TestRollout_TheNewReplicaSetLandingElsewhereReleasesTheKeptPlaces(t *testing.T) {
	r := newRollout(t)
	r.replicaSet(2, 1)
	r.land("web-2-1", 2, "n4")
	r.replicaSet(1, 1)
	r.remove("web-1-1")
	r.remove("web-1-2")
	released := counter(t, "released_scale_down")
	r.replicaSet(2, 3)
	r.land("web-2-2", 2, "n4")
	if _, ok := r.hold("web-1-1"); !ok {
		t.Fatal("released with 2 of the 3 new pods landed")
	}
	r.land("web-2-3", 2, "n4")
	for _, old := range []string{"web-1-1", "web-1-2"} {
		if v, ok := r.hold(old); ok {
			t.Errorf("%s's place is still kept (%s) although the new ReplicaSet has its 3 pods", old, v.Phase)
		}
	}
	if got := counter(t, "released_scale_down") - released; got != 2 {
		t.Errorf("released_scale_down counted %v times, want 2", got)
	}
	r.free("n1")
}

// TestRollout_AScaleDownOfTheDeploymentKeepsNothing: the Deployment scaled 3 -> 2 (no
// rollout: one ReplicaSet, the newest). A pod deleted after the scale-down keeps no place;
// a place kept while 3 were wanted is released by the scale-down.
func TestRollout_AScaleDownOfTheDeploymentKeepsNothing(t *testing.T) {
	t.Run("scaled first", func(t *testing.T) {
		r := newRollout(t)
		r.deployment(2)
		r.replicaSet(1, 2)
		r.remove("web-1-1")
		if _, ok := r.hold("web-1-1"); ok {
			t.Error("a place is kept after the Deployment was scaled down")
		}
	})
	t.Run("hold first", func(t *testing.T) {
		r := newRollout(t)
		r.remove("web-1-1")
		if _, ok := r.hold("web-1-1"); !ok {
			t.Fatal("no place kept while the Deployment wants 3")
		}
		released := counter(t, "released_scale_down")
		r.deployment(2)
		if _, ok := r.hold("web-1-1"); ok {
			t.Error("the place is kept after the Deployment was scaled down to the pods it has")
		}
		if got := counter(t, "released_scale_down") - released; got != 1 {
			t.Errorf("released_scale_down counted %v times, want 1", got)
		}
		r.free("n1")
	})
}

// TestRollout_ADeploymentNotFedYetKeepsThePlaceUntilItComes: the ReplicaSet names a
// Deployment the feed has not brought: the place is kept (its desired count is unknown)
// and released when the Deployment comes wanting no more than its newest ReplicaSet has.
func TestRollout_ADeploymentNotFedYetKeepsThePlaceUntilItComes(t *testing.T) {
	c := newCluster(t)
	c.must(c.h.Add(ts.MakeNode("n2", "8", "16Gi")))
	r := &rollout{cluster: c, pods: map[string]*corev1.Pod{}}
	r.replicaSet(1, 2)
	r.land("web-1-1", 1, "n1")
	r.land("web-1-2", 1, "n2")
	r.replicaSet(1, 1)
	r.clk.Step(time.Minute)
	r.remove("web-1-1")
	if _, ok := r.hold("web-1-1"); !ok {
		t.Fatal("no place kept although the Deployment is unknown")
	}
	r.deployment(1)
	if _, ok := r.hold("web-1-1"); ok {
		t.Error("the place is kept after the Deployment came wanting the 1 pod its ReplicaSet has")
	}
}
