package e2e

import (
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// How a sample of the reserve-on-delete run is judged (see holds.go). multicache's view of
// a node (/debug/cache/nodes/<name>: what it charges, read under one lock) is read between
// two lists of the API. The charge a node should carry is its live pods plus the holds
// whose replacement is still coming; the read is not atomic with the lists, so the
// expectation is an upper bound that gives multicache every benefit of the doubt:
//
//   - live: every pod bound to the node in either list (a pod created or deleted between the
//     lists may or may not be charged yet);
//   - stale: every pod multicache still charges there that neither list has (the API deleted
//     it before the first list; multicache's feed has not applied the delete yet). That is
//     the feed's lag, which every informer-fed cache has, not a double charge; it is reported
//     on its own;
//   - justified holds: every hold multicache charges there whose deleted pod's ReplicaSet
//     has fewer landed pods (bound, not terminal, not being deleted, as the ReplicaSet
//     controller counts active pods) than spec.replicas in either list, or in the second
//     list of the sample before (one sample period earlier: multicache applies the landing
//     of a replacement after the API reports it, and may release the hold that much later
//     without a double charge anyone could act on): a replacement is still coming,
//     whichever of those instants the read saw. For a ReplicaSet a Deployment controls,
//     multicache's rollout rule: the Deployment's newest ReplicaSet (the highest
//     deployment.kubernetes.io/revision) has fewer landed pods than the Deployment's
//     spec.replicas, or the Deployment is not listed (multicache keeps such a place until
//     its TTL).
//
// Excess is what multicache charges above that bound: a hold nothing will come for, or one
// whose replacement already landed and is charged too. Any positive value is a double
// charge at the moment of the read, by a conservative measure. The rollout rule keeps
// every hold of a Deployment until its rollout completes, which may be more holds than
// the newest ReplicaSet lacks pods: that is the rule's price, not counted as excess.

// NodeView is the part of multicache's /debug/cache/nodes/<name> the run reads.
type NodeView struct {
	Name      string              `json:"name"`
	Requested corev1.ResourceList `json:"requested"`
	Reserved  corev1.ResourceList `json:"reserved"`
	// Pods are the pods charged (namespace/name); Reservations the reservations and holds
	// whose placeholder is charged (namespace/name).
	Pods         []string `json:"pods"`
	Reservations []string `json:"reservations"`
}

// APIList is one list of the API: the non-terminal pods by namespace/name, each
// ReplicaSet's and Deployment's desired count by UID, and the newest ReplicaSet of each
// Deployment.
type APIList struct {
	Pods     map[string]*corev1.Pod
	Replicas map[types.UID]int32
	landed   map[types.UID]int32
	// deploymentOf is the controlling Deployment of a ReplicaSet; newest the newest
	// ReplicaSet of a Deployment.
	deploymentOf, newest map[types.UID]types.UID
}

// NewAPIList indexes what one list of pods, ReplicaSets and Deployments returned.
func NewAPIList(pods []corev1.Pod, sets []appsv1.ReplicaSet, deployments []appsv1.Deployment) APIList {
	l := APIList{Pods: map[string]*corev1.Pod{}, Replicas: map[types.UID]int32{}, landed: map[types.UID]int32{},
		deploymentOf: map[types.UID]types.UID{}, newest: map[types.UID]types.UID{}}
	for i := range pods {
		p := &pods[i]
		if store.IsTerminal(p) {
			continue
		}
		l.Pods[p.Namespace+"/"+p.Name] = p
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			l.landed[ref.UID]++
		}
	}
	revisions := map[types.UID]int64{}
	for _, rs := range sets {
		l.Replicas[rs.UID] = ptr.Deref(rs.Spec.Replicas, 1)
		ref := metav1.GetControllerOfNoCopy(&rs)
		if ref == nil || ref.Kind != "Deployment" {
			continue
		}
		l.deploymentOf[rs.UID] = ref.UID
		revision, err := strconv.ParseInt(rs.Annotations[store.DeploymentRevisionAnnotation], 10, 64)
		if err != nil || revision < 0 {
			revision = 0 // as multicache reads it
		}
		newest, seen := l.newest[ref.UID]
		if !seen || revision > revisions[newest] || (revision == revisions[newest] && rs.UID > newest) {
			l.newest[ref.UID] = rs.UID
		}
		revisions[rs.UID] = revision
	}
	for _, d := range deployments {
		l.Replicas[d.UID] = ptr.Deref(d.Spec.Replicas, 1)
	}
	return l
}

// wantsPod reports whether a replacement is coming for a pod of ReplicaSet uid: the
// ReplicaSet has fewer landed pods than it wants or, when a Deployment controls it, the
// Deployment's newest ReplicaSet has fewer than the Deployment wants.
func (l APIList) wantsPod(uid types.UID) bool {
	if d, ok := l.deploymentOf[uid]; ok {
		want, known := l.Replicas[d]
		return !known || l.landed[l.newest[d]] < want
	}
	want, ok := l.Replicas[uid]
	return ok && l.landed[uid] < want
}

// PodRecord is what the run keeps of every pod it saw, to account for its charge (and for
// the hold of its place) after the API deleted it.
type PodRecord struct {
	UID types.UID
	// ReplicaSet is the UID of its controller.
	ReplicaSet types.UID
	// MilliCPU is what multicache charges for it (store.PodRequests).
	MilliCPU int64
	// Hold is the namespace/name of the hold that keeps its place once it is deleted
	// (reservationstore.ReplacementName).
	Hold string
}

// PodIndex finds a pod's record by namespace/name and by the name of its hold.
type PodIndex interface {
	Pod(key string) (PodRecord, bool)
	ByHold(key string) (PodRecord, bool)
}

// NodeAccount is one node at one sample, CPU in millis.
type NodeAccount struct {
	Node string
	// Charged is multicache's requested CPU on the node: its pods and placeholders.
	Charged int64
	// Live is the pods bound to the node in either list; Stale the pods multicache still
	// charges that neither list has; Justified the holds charged whose replacement is still
	// coming (see the package comment above).
	Live, Stale, Justified int64
	// Excess is Charged less Live, Stale and Justified, when positive.
	Excess int64
	// Holds are the holds (and reservations) charged on the node; Unjustified those of
	// them no replacement is coming for.
	Holds       int
	Unjustified []string
	// StalePods are the pods counted in Stale.
	StalePods []string
}

// Legit is the charge the node may carry at this sample: Charged less Excess.
func (a NodeAccount) Legit() int64 { return a.Charged - a.Excess }

// AccountNode judges multicache's view of one node against the two lists around its read;
// earlier lists (the previous sample's) may also justify a hold.
func AccountNode(v NodeView, before, after APIList, pods PodIndex, earlier ...APIList) NodeAccount {
	a := NodeAccount{Node: v.Name, Holds: len(v.Reservations)}
	if q, ok := v.Requested[corev1.ResourceCPU]; ok {
		a.Charged = q.MilliValue()
	}
	counted := map[types.UID]bool{}
	for _, l := range []APIList{before, after} {
		for _, p := range l.Pods {
			if p.Spec.NodeName == v.Name && !counted[p.UID] {
				counted[p.UID] = true
				a.Live += store.PodRequests(p).MilliCPU
			}
		}
	}
	for _, key := range v.Pods {
		if _, ok := before.Pods[key]; ok {
			continue
		}
		if _, ok := after.Pods[key]; ok {
			continue
		}
		if rec, ok := pods.Pod(key); ok {
			a.Stale += rec.MilliCPU
			a.StalePods = append(a.StalePods, key)
		}
	}
	for _, key := range v.Reservations {
		rec, ok := pods.ByHold(key)
		if ok && slices.ContainsFunc(append([]APIList{before, after}, earlier...), func(l APIList) bool { return l.wantsPod(rec.ReplicaSet) }) {
			a.Justified += rec.MilliCPU
			continue
		}
		a.Unjustified = append(a.Unjustified, key)
	}
	slices.Sort(a.Unjustified)
	slices.Sort(a.StalePods)
	a.Excess = max(0, a.Charged-a.Live-a.Stale-a.Justified)
	return a
}
