package testsupport

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// PodOption shapes a pod built by MakePod.
type PodOption func(*corev1.Pod)

// MakePod returns a pending pod with one container "main" and UID "uid-<ns>-<name>".
func MakePod(namespace, name string, opts ...PodOption) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// OnNode binds the pod to a node.
func OnNode(node string) PodOption { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

// Requests sets the requests of the main container ("" leaves a resource out).
func Requests(cpu, memory string) PodOption {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = resourceList(cpu, memory)
	}
}

// WithLabels adds labels given as key, value pairs.
func WithLabels(kv ...string) PodOption {
	return func(p *corev1.Pod) { p.Labels = merge(p.Labels, kv) }
}

// WithAnnotations adds annotations given as key, value pairs.
func WithAnnotations(kv ...string) PodOption {
	return func(p *corev1.Pod) { p.Annotations = merge(p.Annotations, kv) }
}

// InPhase sets the pod's phase.
func InPhase(phase corev1.PodPhase) PodOption {
	return func(p *corev1.Pod) { p.Status.Phase = phase }
}

// WithUID sets the pod's UID.
func WithUID(uid string) PodOption { return func(p *corev1.Pod) { p.UID = types.UID(uid) } }

// OwnedBy makes a workload the pod's controller.
func OwnedBy(kind, name, uid string) PodOption {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true),
		}}
	}
}

// BestEffort charges the pod to its node's best-effort pool.
func BestEffort() PodOption {
	return WithAnnotations(v1alpha1.ResourceTypeAnnotation, string(v1alpha1.ResourceTypeBestEffort))
}

// InGroup makes the pod a member of a pod group.
func InGroup(group string) PodOption { return WithLabels(v1alpha1.PodGroupLabel, group) }

// ConsumedMovement marks the pod as following a movement.
func ConsumedMovement(movement string) PodOption {
	return WithAnnotations(v1alpha1.MovementNameAnnotation, movement)
}

// WithResourceVersion sets the resource version.
func WithResourceVersion(rv string) PodOption { return func(p *corev1.Pod) { p.ResourceVersion = rv } }

// CreatedAt sets the pod's creation timestamp (whole seconds, as the API serves it).
func CreatedAt(t time.Time) PodOption {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t.Truncate(time.Second)) }
}

// ScheduledAt marks the pod scheduled (condition PodScheduled True) at t, as the API's
// binding does (whole seconds); it does not set the node.
func ScheduledAt(t time.Time) PodOption {
	return func(p *corev1.Pod) {
		cond := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t.Truncate(time.Second))}
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled {
				p.Status.Conditions[i] = cond
				return
			}
		}
		p.Status.Conditions = append(p.Status.Conditions, cond)
	}
}

// MakeNode returns a Ready node with the given allocatable (and capacity) and labels.
func MakeNode(name, cpu, memory string, labels ...string) *corev1.Node {
	list := resourceList(cpu, memory)
	list[corev1.ResourcePods] = resource.MustParse("110")
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-node-" + name), Labels: merge(nil, labels)},
		Status: corev1.NodeStatus{
			Capacity:    list.DeepCopy(),
			Allocatable: list,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// MakeNMNode returns an NMNode reporting capacity and allocatable CPU and memory.
func MakeNMNode(name, capCPU, capMemory, allocCPU, allocMemory string) *v1alpha1.NMNode {
	return &v1alpha1.NMNode{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-nmnode-" + name)},
		Status: v1alpha1.NMNodeStatus{
			ResourceCapacity:    resourceList(capCPU, capMemory),
			ResourceAllocatable: resourceList(allocCPU, allocMemory),
		},
	}
}

// MakeCNR returns a CustomNodeResource with a best-effort pool of cpu and memory.
func MakeCNR(name, cpu, memory string) *v1alpha1.CustomNodeResource {
	return &v1alpha1.CustomNodeResource{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-cnr-" + name)},
		Status: v1alpha1.CustomNodeResourceStatus{Resources: v1alpha1.CNRResources{
			Allocatable: resourceList(cpu, memory), Capacity: resourceList(cpu, memory),
		}},
	}
}

// MakePodGroup returns a pod group of minMember.
func MakePodGroup(namespace, name string, minMember int32) *v1alpha1.PodGroup {
	return &v1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-pg-" + namespace + "-" + name)},
		Spec:       v1alpha1.PodGroupSpec{MinMember: minMember},
	}
}

// MakePDB returns a budget selecting matchLabels (key, value pairs) that allows allowed
// disruptions.
func MakePDB(namespace, name string, allowed int32, matchLabels ...string) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-pdb-" + namespace + "-" + name)},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: merge(nil, matchLabels)},
		},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// MakeOwner returns a workload owner whose pod template has the given labels.
func MakeOwner(ownerType v1alpha1.OwnerType, namespace, name string, labels ...string) *store.Owner {
	return &store.Owner{
		Type: ownerType, Namespace: namespace, Name: name,
		UID: types.UID(fmt.Sprintf("uid-%s-%s-%s", ownerType, namespace, name)), Labels: merge(nil, labels),
	}
}

// MakeMovement returns a movement suggesting, for one owner, desired pods per node (node,
// count pairs).
func MakeMovement(name string, owner v1alpha1.OwnerInfo, nodeCounts ...any) *v1alpha1.Movement {
	mo := v1alpha1.MovementOwner{Owner: owner}
	for i := 0; i+1 < len(nodeCounts); i += 2 {
		mo.RecommendedNodes = append(mo.RecommendedNodes, v1alpha1.RecommendedNode{
			Node: nodeCounts[i].(string), DesiredPodCount: int64(nodeCounts[i+1].(int)),
		})
	}
	return &v1alpha1.Movement{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-mvt-" + name)},
		Spec:       v1alpha1.MovementSpec{Creator: "test-descheduler", Owners: []v1alpha1.MovementOwner{mo}},
	}
}

// MakeReservation returns a reservation of cpu and memory on node ("" for Pending) for the
// pods matching matchLabels (key, value pairs).
func MakeReservation(namespace, name, node, cpu, memory string, matchLabels ...string) *v1alpha1.Reservation {
	return &v1alpha1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-rsv-" + namespace + "-" + name)},
		Spec: v1alpha1.ReservationSpec{
			NodeName:    node,
			Resources:   resourceList(cpu, memory),
			PodSelector: &metav1.LabelSelector{MatchLabels: merge(nil, matchLabels)},
		},
	}
}

// ReservationCreatedAt sets a reservation's creation timestamp (whole seconds) and returns
// it.
func ReservationCreatedAt(r *v1alpha1.Reservation, t time.Time) *v1alpha1.Reservation {
	r.CreationTimestamp = metav1.NewTime(t.Truncate(time.Second))
	return r
}

// MatchedStatus is the status a status writer persists for a reservation reserved at
// reservedAt and then matched by owner.
func MatchedStatus(owner *corev1.Pod, reservedAt time.Time) v1alpha1.ReservationStatus {
	return v1alpha1.ReservationStatus{
		Phase:        v1alpha1.ReservationMatched,
		ReservedAt:   ptr.To(metav1.NewTime(reservedAt.Truncate(time.Second))),
		CurrentOwner: &v1alpha1.PodReference{Namespace: owner.Namespace, Name: owner.Name, UID: owner.UID},
	}
}

// ReservedStatus is the status a status writer persists for a reservation reserved at
// reservedAt that expires at expiresAt.
func ReservedStatus(reservedAt, expiresAt time.Time) v1alpha1.ReservationStatus {
	return v1alpha1.ReservationStatus{
		Phase:      v1alpha1.ReservationReserved,
		ReservedAt: ptr.To(metav1.NewTime(reservedAt.Truncate(time.Second))),
		ExpiresAt:  ptr.To(metav1.NewTime(expiresAt.Truncate(time.Second))),
	}
}

func resourceList(cpu, memory string) corev1.ResourceList {
	list := corev1.ResourceList{}
	if cpu != "" {
		list[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		list[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return list
}

func merge(m map[string]string, kv []string) map[string]string {
	if len(kv) == 0 {
		return m
	}
	if m == nil {
		m = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
