package movementstore_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/movementstore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

var (
	webOwner = v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}
	webKey   = store.OwnerKey{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}
)

func newStore(t *testing.T) *movementstore.Store {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return movementstore.New(config)
}

func follower(name, node, movement string) *corev1.Pod {
	return ts.MakePod("ns", name, ts.OnNode(node), ts.OwnedBy("ReplicaSet", "web", "uid-web"), ts.ConsumedMovement(movement))
}

func actual(v store.Movement, node string) []string {
	var out []string
	for _, o := range v.Owners {
		for _, n := range o.Nodes {
			if n.Node == node {
				for _, p := range n.Actual {
					out = append(out, p.Name)
				}
			}
		}
	}
	return out
}

func TestMovement_ActualPodsFollowThePodsThatConsumedIt(t *testing.T) {
	s := newStore(t)
	early := follower("early", "n1", "mv") // before the movement: kept
	s.AddPod(early)
	s.AddMovement(ts.MakeMovement("mv", webOwner, "n1", 2, "n2", 1))
	s.AddPod(follower("second", "n1", "mv"))
	s.AddPod(follower("elsewhere", "n3", "mv"))
	s.AddPod(ts.MakePod("ns", "unbound", ts.OwnedBy("ReplicaSet", "web", "uid-web"), ts.ConsumedMovement("mv")))
	s.AddPod(ts.MakePod("ns", "other-owner", ts.OnNode("n1"), ts.OwnedBy("ReplicaSet", "db", "uid-db"), ts.ConsumedMovement("mv")))

	v, ok := s.Get("mv")
	if !ok {
		t.Fatal("movement missing")
	}
	if got := actual(v, "n1"); len(got) != 2 || got[0] != "early" || got[1] != "second" {
		t.Errorf("actual pods on n1: %v, want [early second]", got)
	}
	if got := actual(v, "n3"); len(got) != 1 {
		t.Errorf("a pod that landed on an unsuggested node is not reported: %v", got)
	}
	left := s.SuggestionsFor(webKey)
	if left["n1"] != 0 || left["n2"] != 1 || len(left) != 1 {
		t.Errorf("suggestions left %v, want only n2: 1", left)
	}

	s.DeletePod(early)
	if v, _ = s.Get("mv"); len(actual(v, "n1")) != 1 {
		t.Errorf("a deleted pod is still an actual pod: %v", actual(v, "n1"))
	}
	if left = s.SuggestionsFor(webKey); left["n1"] != 1 {
		t.Errorf("suggestions left on n1 after a pod went: %d, want 1", left["n1"])
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}

func TestMovement_OwnerUIDMustMatchWhenSet(t *testing.T) {
	s := newStore(t)
	owner := webOwner
	owner.UID = "uid-previous-web"
	s.AddMovement(ts.MakeMovement("mv", owner, "n1", 1))
	s.AddPod(follower("p", "n1", "mv"))
	if v, _ := s.Get("mv"); len(actual(v, "n1")) != 0 {
		t.Error("a pod of a recreated owner (other UID) consumed the movement")
	}
}

func TestMovement_DeletedMovementKeepsNothingOnceItsPodsGo(t *testing.T) {
	s := newStore(t)
	m := ts.MakeMovement("mv", webOwner, "n1", 1)
	p := follower("p", "n1", "mv")
	s.AddMovement(m)
	s.AddPod(p)
	s.DeleteMovement(m)
	if len(s.SuggestionsFor(webKey)) != 0 {
		t.Error("a deleted movement still makes suggestions")
	}
	s.DeletePod(p)
	if s.Len() != 0 {
		t.Errorf("%d movements kept", s.Len())
	}
	s.TakeOutbox() // as the handler does after every call
	for _, err := range s.CheckInvariants() {
		t.Error(err)
	}
}
