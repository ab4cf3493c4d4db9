package v1alpha1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/seed0f91f25e/multicache/api/v1alpha1"
)

// invalidCase is one object the API must reject, and the text the rejection must contain:
// the path of the offending field (and, for CEL rules, what to fix).
type invalidCase struct {
	name string
	// create is written with Create; when status is set, the object is created valid first
	// and then status(obj) is written through the status subresource; when update is set, the
	// object is created valid and update(obj) is written with Update.
	create client.Object
	status func(client.Object)
	update func(client.Object)
	want   []string
}

func TestValidation_RejectsInvalidObjectsNamingTheField(t *testing.T) {
	cases := []invalidCase{
		{
			name:   "podgroup minMember 0",
			create: podGroup(func(pg *v1.PodGroup) { pg.Spec.MinMember = 0 }),
			want:   []string{"spec.minMember", "should be greater than or equal to 1"},
		},
		{
			name:   "podgroup scheduleTimeoutSeconds 0",
			create: podGroup(func(pg *v1.PodGroup) { pg.Spec.ScheduleTimeoutSeconds = ptr.To[int32](0) }),
			want:   []string{"spec.scheduleTimeoutSeconds", "greater than or equal to 1"},
		},
		{
			name:   "podgroup unknown phase in status",
			create: podGroup(nil),
			status: func(o client.Object) { o.(*v1.PodGroup).Status.Phase = "Sleeping" },
			want:   []string{"status.phase", `"Pending"`},
		},
		{
			name:   "podgroup negative counter in status",
			create: podGroup(nil),
			status: func(o client.Object) { o.(*v1.PodGroup).Status.Running = -1 },
			want:   []string{"status.running", "greater than or equal to 0"},
		},
		{
			name:   "reservation negative ttlSeconds",
			create: reservation(func(r *v1.Reservation) { r.Spec.TTLSeconds = ptr.To[int64](-5) }),
			want:   []string{"spec.ttlSeconds", "greater than or equal to 1"},
		},
		{
			name:   "reservation ttlSeconds over 30 days",
			create: reservation(func(r *v1.Reservation) { r.Spec.TTLSeconds = ptr.To[int64](9223372037) }),
			want:   []string{"spec.ttlSeconds", "less than or equal to 2592000"},
		},
		{
			name: "reservation negative resource quantity",
			create: reservation(func(r *v1.Reservation) {
				r.Spec.Resources[corev1.ResourceCPU] = resource.MustParse("-1")
			}),
			want: []string{"spec.resources", "every quantity must be zero or positive"},
		},
		{
			name:   "reservation without resources",
			create: reservation(func(r *v1.Reservation) { r.Spec.Resources = corev1.ResourceList{} }),
			want:   []string{"spec.resources", "should have at least 1 properties"},
		},
		{
			name:   "reservation without podSelector",
			create: reservation(func(r *v1.Reservation) { r.Spec.PodSelector = nil }),
			want:   []string{"spec.podSelector", "Required value"},
		},
		{
			name:   "reservation nodeName changed once set",
			create: reservation(nil),
			update: func(o client.Object) { o.(*v1.Reservation).Spec.NodeName = "node-b" },
			want:   []string{"spec.nodeName is immutable once set"},
		},
		{
			name:   "reservation nodeName cleared once set",
			create: reservation(nil),
			update: func(o client.Object) { o.(*v1.Reservation).Spec.NodeName = "" },
			want:   []string{"spec.nodeName is immutable once set"},
		},
		{
			name:   "reservation unknown phase in status",
			create: reservation(nil),
			status: func(o client.Object) { o.(*v1.Reservation).Status.Phase = "Gone" },
			want:   []string{"status.phase", `"Reserved"`},
		},
		{
			name: "movement negative desiredPodCount",
			create: movement(func(m *v1.Movement) {
				m.Spec.Owners[0].RecommendedNodes[0].DesiredPodCount = -1
			}),
			want: []string{"spec.owners[0].recommendedNodes[0].desiredPodCount", "greater than or equal to 0"},
		},
		{
			name:   "movement without creator",
			create: movement(func(m *v1.Movement) { m.Spec.Creator = "" }),
			want:   []string{"spec.creator"},
		},
		{
			name:   "movement owner of unknown type",
			create: movement(func(m *v1.Movement) { m.Spec.Owners[0].Owner.Type = "CronJob" }),
			want:   []string{"spec.owners[0].owner.type", `"ReplicaSet"`},
		},
		{
			name: "movement with the same owner twice",
			create: movement(func(m *v1.Movement) {
				m.Spec.Owners = append(m.Spec.Owners, *m.Spec.Owners[0].DeepCopy())
			}),
			want: []string{"spec.owners", "each owner (type, namespace, name) may appear only once"},
		},
		{
			name:   "nmnode negative allocatable in status",
			create: nmNode(),
			status: func(o client.Object) {
				o.(*v1.NMNode).Status.ResourceAllocatable = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("-1Gi")}
			},
			want: []string{"status.resourceAllocatable", "every quantity must be zero or positive"},
		},
		{
			name:   "nmnode taint without key",
			create: nmNodeWithTaints(corev1.Taint{Key: "", Effect: corev1.TaintEffectNoSchedule}),
			want:   []string{"spec.taints", "every taint needs a key"},
		},
		{
			name:   "nmnode taint with an unknown effect",
			create: nmNodeWithTaints(corev1.Taint{Key: "dedicated", Effect: "Bogus"}),
			want:   []string{"spec.taints", "effect must be NoSchedule, PreferNoSchedule or NoExecute"},
		},
		{
			name: "cnr taint with an unknown effect",
			create: cnr(func(c *v1.CustomNodeResource) {
				c.Spec.Taints = []corev1.Taint{{Key: "example.com/be", Effect: "Sometimes"}}
			}),
			want: []string{"spec.taints", "effect must be NoSchedule, PreferNoSchedule or NoExecute"},
		},
		{
			name:   "cnr negative best-effort allocatable in status",
			create: cnr(nil),
			status: func(o client.Object) {
				o.(*v1.CustomNodeResource).Status.Resources.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-2")}
			},
			want: []string{"status.resources.allocatable", "every quantity must be zero or positive"},
		},
		{
			name: "cnr property without name",
			create: cnr(func(c *v1.CustomNodeResource) {
				c.Spec.NodeResourceProperties = []v1.NodeResourceProperty{{Name: "", Value: []string{"x"}}}
			}),
			want: []string{"spec.nodeResourceProperties[0].name"},
		},
		{
			name:   "cnr unknown qos level in status",
			create: cnr(nil),
			status: func(o client.Object) {
				o.(*v1.CustomNodeResource).Status.NodeMetricStatus.QoSLevels = []v1.QoSLevelUsage{{QoSLevel: "platinum"}}
			},
			want: []string{"status.nodeMetricStatus.qosLevels[0].qosLevel", `"best-effort"`},
		},
	}
	if len(cases) < 12 {
		t.Fatalf("want at least 12 invalid objects, have %d", len(cases))
	}
	ctx := context.Background()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.create
			obj.SetName(fmt.Sprintf("invalid-%d", i))
			err := env.Client.Create(ctx, obj)
			if tc.status != nil || tc.update != nil {
				if err != nil {
					t.Fatalf("the valid object was rejected: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
				if tc.status != nil {
					tc.status(obj)
					err = env.Client.Status().Update(ctx, obj)
				} else {
					tc.update(obj)
					err = env.Client.Update(ctx, obj)
				}
			} else if err == nil {
				t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
			}
			if err == nil {
				t.Fatal("the API accepted an invalid object")
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestStatus_IsWrittenOnlyThroughTheStatusSubresource checks both directions: a spec write
// cannot change status, a status write cannot change spec.
func TestStatus_IsWrittenOnlyThroughTheStatusSubresource(t *testing.T) {
	ctx := context.Background()
	for _, obj := range []client.Object{podGroup(nil), reservation(nil)} {
		obj.SetName("status-" + strings.ToLower(fmt.Sprintf("%T", obj)[len("*v1alpha1."):]))
		t.Run(obj.GetName(), func(t *testing.T) {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })

			// A spec write that also carries a status: the status is dropped.
			setPhaseAndSpec(obj, "spec-write")
			if err := env.Client.Update(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if got := read(t, obj); phaseOf(got) != "" || specMarker(got) != "spec-write" {
				t.Fatalf("after a spec write: phase %q (want empty), spec marker %q", phaseOf(got), specMarker(got))
			}

			// A status write that also carries a spec change: the spec change is dropped.
			obj = read(t, obj)
			setPhaseAndSpec(obj, "status-write")
			if err := env.Client.Status().Update(ctx, obj); err != nil {
				t.Fatal(err)
			}
			got := read(t, obj)
			if phaseOf(got) == "" || specMarker(got) != "spec-write" {
				t.Fatalf("after a status write: phase %q (want set), spec marker %q (want spec-write)", phaseOf(got), specMarker(got))
			}
		})
	}
}

// setPhaseAndSpec sets a valid status phase and a spec marker on a PodGroup or Reservation.
func setPhaseAndSpec(obj client.Object, marker string) {
	switch o := obj.(type) {
	case *v1.PodGroup:
		o.Status.Phase = v1.PodGroupScheduled
		o.Spec.PriorityClassName = marker
	case *v1.Reservation:
		o.Status.Phase = v1.ReservationReserved
		o.Spec.PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"marker": marker}}
	}
}

func phaseOf(obj client.Object) string {
	switch o := obj.(type) {
	case *v1.PodGroup:
		return string(o.Status.Phase)
	case *v1.Reservation:
		return string(o.Status.Phase)
	}
	return ""
}

func specMarker(obj client.Object) string {
	switch o := obj.(type) {
	case *v1.PodGroup:
		return o.Spec.PriorityClassName
	case *v1.Reservation:
		return o.Spec.PodSelector.MatchLabels["marker"]
	}
	return ""
}

func read(t *testing.T, obj client.Object) client.Object {
	t.Helper()
	got := obj.DeepCopyObject().(client.Object)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func podGroup(mutate func(*v1.PodGroup)) *v1.PodGroup {
	pg := &v1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec:       v1.PodGroupSpec{MinMember: 2},
	}
	if mutate != nil {
		mutate(pg)
	}
	return pg
}

func reservation(mutate func(*v1.Reservation)) *v1.Reservation {
	r := &v1.Reservation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1.ReservationSpec{
			NodeName:    "node-a",
			Resources:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if mutate != nil {
		mutate(r)
	}
	return r
}

func movement(mutate func(*v1.Movement)) *v1.Movement {
	m := &v1.Movement{Spec: v1.MovementSpec{
		Creator: "descheduler",
		Owners: []v1.MovementOwner{{
			Owner:            v1.OwnerInfo{Type: v1.OwnerReplicaSet, Namespace: "default", Name: "web"},
			RecommendedNodes: []v1.RecommendedNode{{Node: "node-a", DesiredPodCount: 1}},
		}},
	}}
	if mutate != nil {
		mutate(m)
	}
	return m
}

func nmNode() *v1.NMNode { return &v1.NMNode{} }

func nmNodeWithTaints(taints ...corev1.Taint) *v1.NMNode {
	return &v1.NMNode{Spec: v1.NMNodeSpec{Taints: taints}}
}

func cnr(mutate func(*v1.CustomNodeResource)) *v1.CustomNodeResource {
	c := &v1.CustomNodeResource{}
	if mutate != nil {
		mutate(c)
	}
	return c
}

// TestValidation_AcceptsTheTaintsANodeAccepts: the taint rules reject nothing a Node takes.
func TestValidation_AcceptsTheTaintsANodeAccepts(t *testing.T) {
	ctx := context.Background()
	taints := []corev1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute},
		{Key: "example.com/maintenance", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	nm := nmNodeWithTaints(taints...)
	nm.SetName("valid-taints")
	c := cnr(func(c *v1.CustomNodeResource) { c.Spec.Taints = taints })
	c.SetName("valid-taints")
	for _, obj := range []client.Object{nm, c} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Errorf("%T with valid taints rejected: %v", obj, err)
			continue
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
}
