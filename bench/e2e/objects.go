package e2e

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// Names of the populated objects. Index i of a kind always names the same object, so a
// population can be resumed or checked by index.

// NodeName names node i.
func NodeName(i int) string { return fmt.Sprintf("node-%05d", i) }

// NamespaceName names namespace i.
func NamespaceName(i int) string { return fmt.Sprintf("bench-%02d", i) }

// ReplicaSetName names ReplicaSet r.
func ReplicaSetName(r int) string { return fmt.Sprintf("rs-%06d", r) }

// ReplicaSetNamespace is the namespace of ReplicaSet r (and of its pods).
func ReplicaSetNamespace(r int) string {
	return NamespaceName(r * PodsPerReplicaSet / PodsPerNamespace)
}

// PodGroupName names the PodGroup of ReplicaSet r (when r is a gang).
func PodGroupName(r int) string { return "pg-" + ReplicaSetName(r) }

func appLabel(r int) string { return ReplicaSetName(r) }

// Label keys the harness writes.
const (
	labelApp   = "app"
	labelTier  = "tier"
	labelChurn = "bench.multicache.dev/churn"
)

// MakeNode returns node i: 64 cores, 256Gi, 110 pods, Ready, with the usual topology
// labels. Nodes keep their status on create.
func MakeNode(i int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	name := NodeName(i)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname":           name,
			"topology.kubernetes.io/zone":      fmt.Sprintf("zone-%d", i%3),
			"node.kubernetes.io/instance-type": "bench.16xlarge",
		}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Phase:       corev1.NodeRunning,
		},
	}
	for _, k := range ShardSplits {
		node.Labels[ShardLabel(k)] = ShardOf(i, k)
	}
	return node
}

// MakeNamespace returns namespace i.
func MakeNamespace(i int) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NamespaceName(i)}}
}

// MakeReplicaSet returns ReplicaSet r with the given number of replicas. No controller
// manager runs, so it never creates pods itself.
func MakeReplicaSet(r, replicas int) *appsv1.ReplicaSet {
	labels := map[string]string{labelApp: appLabel(r), labelTier: tier(r)}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ReplicaSetNamespace(r), Name: ReplicaSetName(r), Labels: labels},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: appLabel(r)}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}

func tier(r int) string { return []string{"web", "api", "batch", "cache"}[r%4] }

// MakePod returns pod slot of ReplicaSet r (uid is the ReplicaSet's), bound to node. One
// pod in three has a sidecar; requests vary with the slot.
func MakePod(r, slot int, rsUID types.UID, node string) *corev1.Pod {
	labels := map[string]string{labelApp: appLabel(r), labelTier: tier(r), "pod-template-hash": fmt.Sprintf("h%06d", r)}
	if r%ReplicaSetsPerPodGroup == 0 { // a gang
		labels[v1alpha1.PodGroupLabel] = PodGroupName(r)
	}
	containers := []corev1.Container{container("main", fmt.Sprintf("%dm", 100+100*(slot%5)), fmt.Sprintf("%dMi", 128<<(slot%3)))}
	if slot%3 == 0 {
		containers = append(containers, container("sidecar", "50m", "64Mi"))
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ReplicaSetNamespace(r),
			Name:      fmt.Sprintf("%s-%d", ReplicaSetName(r), slot),
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: ReplicaSetName(r), UID: rsUID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: containers},
	}
}

func container(name, cpu, memory string) corev1.Container {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return corev1.Container{Name: name, Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl}}
}

// MakePodGroup returns the PodGroup of ReplicaSet r: a gang of all its pods.
func MakePodGroup(r int) *v1alpha1.PodGroup {
	return &v1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ReplicaSetNamespace(r), Name: PodGroupName(r)},
		Spec:       v1alpha1.PodGroupSpec{MinMember: PodsPerReplicaSet, ScheduleTimeoutSeconds: ptr.To(int32(600))},
	}
}

// MakePDB returns the PDB covering ReplicaSet r.
func MakePDB(r int) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ReplicaSetNamespace(r), Name: "pdb-" + ReplicaSetName(r)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(PodsPerReplicaSet - 1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{labelApp: appLabel(r)}},
		},
	}
}

// MakeReservation returns reservation k, on node k*NodesPerReservation, for pods labelled
// with a key no pod carries: it stays Reserved (its TTL is a day).
func MakeReservation(k int) *v1alpha1.Reservation {
	return &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceName(0), Name: fmt.Sprintf("rsv-%05d", k)},
		Spec: v1alpha1.ReservationSpec{
			NodeName:    NodeName(k * NodesPerReservation),
			Resources:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench.multicache.dev/reservation": fmt.Sprintf("rsv-%05d", k)}},
			TTLSeconds:  ptr.To(int64(86400)),
		},
	}
}

// MakeNMNode returns node i as its node-manager agent reports it (status written through
// the status subresource after the create): 2 cores and 4Gi kept back.
func MakeNMNode(i int) *v1alpha1.NMNode {
	return &v1alpha1.NMNode{
		ObjectMeta: metav1.ObjectMeta{Name: NodeName(i)},
		Status: v1alpha1.NMNodeStatus{
			ResourceCapacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi")},
			ResourceAllocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("62"), corev1.ResourceMemory: resource.MustParse("252Gi")},
		},
	}
}

// MakeCNR returns the best-effort pool of node i (status written after the create).
func MakeCNR(i int) *v1alpha1.CustomNodeResource {
	return &v1alpha1.CustomNodeResource{
		ObjectMeta: metav1.ObjectMeta{Name: NodeName(i)},
		Status: v1alpha1.CustomNodeResourceStatus{Resources: v1alpha1.CNRResources{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("32Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi")},
		}},
	}
}
