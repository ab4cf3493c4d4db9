package reservationstore

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// A Deployment's rollout keeps places. The deployment controller scales the old ReplicaSet
// down before that ReplicaSet deletes a pod, and the pod that takes the place is of the
// new ReplicaSet: the ReplicaSet rule would keep nothing. So for a pod whose ReplicaSet a
// Deployment controls, a replacement is coming while the Deployment's newest ReplicaSet
// (the highest store.DeploymentRevisionAnnotation among its ReplicaSets the store knows)
// has fewer landed pods than the Deployment's spec.replicas; the place is kept for any pod
// of the Deployment (the hold's selector leaves pod-template-hash out). Once the newest
// ReplicaSet has them all, the Deployment's remaining holds are released
// (released_scale_down), as is a hold the Deployment's scale-down leaves unwanted. A
// Deployment the feed has not brought keeps its pods' places until the TTL.

// addDeployment keeps a Deployment's desired count, with its ReplicaSets if they came first
// (its stub), and decides again for the holds of all of them.
func (s *Store) addDeployment(o *store.Owner) {
	key := o.Key()
	info := ownerInfo{uid: o.UID, value: o.ReserveOnDelete, replicas: o.Replicas}
	if prev, ok := s.owners[key]; ok && sameUID(prev.uid, o.UID) {
		info.replicaSets = prev.replicaSets
	}
	s.owners[key] = info
	s.redecideRollout(info)
}

// deleteDeployment forgets a Deployment; a stub stays while ReplicaSets the store knows
// name it as their controller (their pods' places are then kept until the TTL).
func (s *Store) deleteDeployment(key store.OwnerKey, prev ownerInfo) {
	if len(prev.replicaSets) == 0 {
		delete(s.owners, key)
		return
	}
	s.owners[key] = ownerInfo{uid: prev.uid, replicaSets: prev.replicaSets, stub: true}
}

// joinDeployment records ReplicaSet rs under its Deployment, standing up a stub for a
// Deployment not seen yet. A ReplicaSet naming a Deployment of another UID (one deleted
// and created again under the same name) joins none.
func (s *Store) joinDeployment(rs ownerInfo) {
	ref := rs.deployment
	d, ok := s.owners[ref.Key]
	switch {
	case !ok:
		d = ownerInfo{uid: ref.UID, stub: true}
	case !sameUID(d.uid, ref.UID):
		return
	}
	if d.replicaSets == nil {
		d.replicaSets = map[types.UID]int64{}
	}
	d.replicaSets[rs.uid] = rs.revision
	s.owners[ref.Key] = d
}

// leaveDeployment forgets ReplicaSet rs under its Deployment (a stub left with none is
// dropped). It returns the Deployment, whose holds the caller decides again for once the
// ReplicaSet is in its new state (not between: a release cannot be undone).
func (s *Store) leaveDeployment(rs ownerInfo) (ownerInfo, bool) {
	ref := rs.deployment
	if ref == nil {
		return ownerInfo{}, false
	}
	d, ok := s.owners[ref.Key]
	if !ok || !sameUID(d.uid, ref.UID) {
		return ownerInfo{}, false
	}
	delete(d.replicaSets, rs.uid)
	if d.stub && len(d.replicaSets) == 0 {
		delete(s.owners, ref.Key)
	}
	return d, true
}

// redecideRollout decides again for the holds of all of Deployment d's ReplicaSets.
func (s *Store) redecideRollout(d ownerInfo) {
	for rs := range d.replicaSets {
		s.redecide(rs)
	}
}

// redecideFor decides again for the holds of owner key's pods, or for those of every
// ReplicaSet of its Deployment when it is a Deployment's ReplicaSet.
func (s *Store) redecideFor(key store.OwnerKey, uid types.UID) {
	if o, ok := s.owner(key, uid); ok && o.deployment != nil {
		if d, ok := s.owner(o.deployment.Key, o.deployment.UID); ok {
			s.redecideRollout(d)
			return
		}
	}
	s.redecide(uid)
}

// rolledOut reports whether the Deployment ref has its pods without a replacement: its
// newest ReplicaSet has landed the Deployment's spec.replicas; never while the Deployment
// is unknown.
func (s *Store) rolledOut(ref *store.OwnerRef) (bool, string) {
	d, ok := s.owner(ref.Key, ref.UID)
	if !ok || d.stub || d.replicas == nil {
		return false, ""
	}
	newest, revision := newestReplicaSet(d.replicaSets)
	n, want := s.landed[newest], *d.replicas
	return n >= want, fmt.Sprintf("Deployment %s wants %d pods and %d of its newest ReplicaSet (revision %d) have landed",
		ref.Key.Name, want, n, revision)
}

// newestReplicaSet returns the ReplicaSet of the highest revision (of equal revisions,
// the highest UID, so that every replica picks the same).
func newestReplicaSet(sets map[types.UID]int64) (types.UID, int64) {
	var newest types.UID
	revision := int64(-1)
	for uid, r := range sets {
		if r > revision || (r == revision && uid > newest) {
			newest, revision = uid, r
		}
	}
	return newest, revision
}

// sameUID reports whether two UIDs may name the same object (an empty one names any, as in
// Store.owner).
func sameUID(a, b types.UID) bool { return a == "" || b == "" || a == b }
