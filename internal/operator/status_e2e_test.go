package operator

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		o.SetUID("")
		if err := env.Client.Create(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// bind binds a pod to a node through the binding subresource, as a scheduler does.
func bind(t *testing.T, pod *corev1.Pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := env.Client.SubResource("binding").Create(ctx(), pod, b); err != nil {
		t.Fatal(err)
	}
}

// setPhase writes a pod's phase through the status subresource, as a kubelet does.
func setPhase(t *testing.T, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	if err := env.Client.Get(ctx(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = phase
	if err := env.Client.Status().Update(ctx(), pod); err != nil {
		t.Fatal(err)
	}
}

func deleteNow(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Delete(ctx(), o, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
}

func TestNodeMerge_NodeNMNodeAndCNRMakeOneNodeInfo(t *testing.T) {
	op := startOperator(t)
	node, nm, cnr := ts.MakeNode("merge", "16", "64Gi"), ts.MakeNMNode("merge", "16", "64Gi", "14", "60Gi"), ts.MakeCNR("merge", "6", "24Gi")
	create(t, node, nm)
	// Status is written by the agents through the status subresource.
	nm.Status = ts.MakeNMNode("merge", "16", "64Gi", "14", "60Gi").Status
	cnrStatus := cnr.Status
	create(t, cnr)
	cnr.Status = cnrStatus
	for _, o := range []client.Object{nm, cnr} {
		if err := env.Client.Status().Update(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(what string, cpu, bestEffortCPU int64, present bool) {
		t.Helper()
		eventually(t, what, func() (bool, string) {
			info, ok := op.Cache.NodeInfo("merge")
			if !present {
				return !ok, "still cached"
			}
			if !ok {
				return false, "not cached"
			}
			return info.Allocatable.MilliCPU == cpu && info.BestEffortAllocatable.MilliCPU == bestEffortCPU,
				fmt.Sprintf("allocatable %dm best-effort %dm", info.Allocatable.MilliCPU, info.BestEffortAllocatable.MilliCPU)
		})
	}
	expect("all three sources merge", 14000, 6000, true)
	deleteNow(t, nm)
	expect("without the NMNode the Node's allocatable stays", 16000, 6000, true)
	deleteNow(t, node)
	expect("with only the CNR the best-effort pool stays", 0, 6000, true)
	deleteNow(t, cnr)
	expect("with no source left the NodeInfo goes", 0, 0, false)
}

func TestPodGroup_PendingScheduledRunningThenTimeout(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("pg-node", "32", "64Gi")))
	create(t, ts.MakePodGroup(ns, "gang", 3))
	key := types.NamespacedName{Namespace: ns, Name: "gang"}
	expectPhase := func(key types.NamespacedName, want v1alpha1.PodGroupPhase, counts string) {
		t.Helper()
		eventually(t, "pod group "+key.Name+" is "+string(want), func() (bool, string) {
			pg := &v1alpha1.PodGroup{}
			if err := env.Client.Get(ctx(), key, pg); err != nil {
				return false, err.Error()
			}
			s := pg.Status
			got := fmt.Sprintf("pending=%d scheduled=%d running=%d", s.Pending, s.Scheduled, s.Running)
			return s.Phase == want && (counts == "" || got == counts), fmt.Sprintf("phase %q %s", s.Phase, got)
		})
	}
	expectPhase(key, v1alpha1.PodGroupPending, "pending=0 scheduled=0 running=0")

	var pods []*corev1.Pod
	for i := range 3 {
		p := withoutUID(ts.MakePod(ns, fmt.Sprintf("member-%d", i), ts.InGroup("gang"), ts.Requests("1", "1Gi")))
		create(t, p)
		pods = append(pods, p)
	}
	expectPhase(key, v1alpha1.PodGroupPreScheduling, "pending=3 scheduled=0 running=0")
	for _, p := range pods[:2] {
		bind(t, p, "pg-node")
	}
	expectPhase(key, v1alpha1.PodGroupPreScheduling, "pending=1 scheduled=2 running=0")

	// An assumption is the cache's, not the API's: the cache counts the assumed member (a
	// scheduler's Permit waits on that), the status written to the API does not.
	assumed := pods[2].DeepCopy()
	assumed.Spec.NodeName = "pg-node"
	if err := op.Cache.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	if g, _ := op.Cache.PodGroup(key); !g.MinMemberReached {
		t.Error("the cache does not count the assumed member")
	}
	ts.Consistently(t, "the status counts bound members only", 2*time.Second, 50*time.Millisecond, func() (bool, string) {
		pg := &v1alpha1.PodGroup{}
		if err := env.Client.Get(ctx(), key, pg); err != nil {
			return false, err.Error()
		}
		return pg.Status.Phase == v1alpha1.PodGroupPreScheduling && pg.Status.Scheduled == 2,
			fmt.Sprintf("phase %q scheduled=%d", pg.Status.Phase, pg.Status.Scheduled)
	})
	bind(t, pods[2], "pg-node")
	expectPhase(key, v1alpha1.PodGroupScheduled, "pending=0 scheduled=3 running=0")
	for _, p := range pods {
		setPhase(t, p, corev1.PodRunning)
	}
	expectPhase(key, v1alpha1.PodGroupRunning, "pending=0 scheduled=0 running=3")
	if g, _ := op.Cache.PodGroup(key); !g.MinMemberReached {
		t.Error("the reader says minMember is not reached")
	}

	// A group whose members never come times out.
	lonely := ts.MakePodGroup(ns, "lonely", 2)
	lonely.Spec.ScheduleTimeoutSeconds = ptr.To[int32](1)
	create(t, lonely)
	expectPhase(types.NamespacedName{Namespace: ns, Name: "lonely"}, v1alpha1.PodGroupTimeout, "")
	deleteNow(t, pods[0], pods[1], pods[2])
}

func TestReservation_ReservedMatchedExpiredThenCollected(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ReservationGCGrace = time.Second })
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakeNode("rsv-node", "8", "16Gi")))
	create(t, ts.MakeReservation(ns, "hold", "rsv-node", "2", "4Gi", "app", "web"))
	key := types.NamespacedName{Namespace: ns, Name: "hold"}
	status := func(key types.NamespacedName) (*v1alpha1.Reservation, error) {
		r := &v1alpha1.Reservation{}
		return r, env.Client.Get(ctx(), key, r)
	}
	charged := func(requested, reserved int64) func() (bool, string) {
		return func() (bool, string) {
			info, ok := op.Cache.NodeInfo("rsv-node")
			if !ok {
				return false, "node not cached"
			}
			return info.Requested.MilliCPU == requested && info.Reserved.MilliCPU == reserved,
				fmt.Sprintf("requested %dm reserved %dm", info.Requested.MilliCPU, info.Reserved.MilliCPU)
		}
	}
	eventually(t, "the reservation is Reserved with its times", func() (bool, string) {
		r, err := status(key)
		if err != nil {
			return false, err.Error()
		}
		return r.Status.Phase == v1alpha1.ReservationReserved && r.Status.ReservedAt != nil && r.Status.ExpiresAt != nil, fmt.Sprintf("%+v", r.Status)
	})
	eventually(t, "the placeholder is charged", charged(2000, 2000))

	pod := withoutUID(ts.MakePod(ns, "web-1", ts.OnNode("rsv-node"), ts.Requests("2", "4Gi"), ts.WithLabels("app", "web")))
	create(t, pod)
	eventually(t, "the reservation is Matched by the pod", func() (bool, string) {
		r, err := status(key)
		if err != nil {
			return false, err.Error()
		}
		ok := r.Status.Phase == v1alpha1.ReservationMatched && r.Status.CurrentOwner != nil && r.Status.CurrentOwner.Name == "web-1"
		return ok, fmt.Sprintf("%+v", r.Status)
	})
	eventually(t, "nothing is counted twice", charged(2000, 0))

	short := ts.MakeReservation(ns, "short", "rsv-node", "1", "1Gi", "app", "db")
	short.Spec.TTLSeconds = ptr.To[int64](1)
	create(t, short)
	shortKey := types.NamespacedName{Namespace: ns, Name: "short"}
	eventually(t, "the short reservation expires", func() (bool, string) {
		r, err := status(shortKey)
		if err != nil {
			return false, err.Error()
		}
		return r.Status.Phase == v1alpha1.ReservationExpired, fmt.Sprintf("%+v", r.Status)
	})
	eventually(t, "its resources are released", charged(2000, 0))
	eventually(t, "it is deleted after the grace period", func() (bool, string) {
		_, err := status(shortKey)
		return apierrors.IsNotFound(err), fmt.Sprintf("%v", err)
	})
	if r, err := status(key); err != nil || r.Status.Phase != v1alpha1.ReservationMatched {
		t.Errorf("the matched reservation was touched: %v %+v", err, r.Status)
	}
	deleteNow(t, pod)
}

func TestMovement_ActualPodsFollowThePodsThatConsumedIt(t *testing.T) {
	op := startOperator(t, func(o *Options) { o.ComponentName = "mc-e2e" })
	ns := newNamespace(t)
	rs := replicaSet(ns, "web", map[string]string{"app": "web"})
	create(t, rs)
	name := "mvt-" + ns
	create(t, ts.MakeMovement(name, v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: ns, Name: "web"}, "mvt-node", 2))
	var pods []*corev1.Pod
	for i := range 2 {
		p := withoutUID(ts.MakePod(ns, fmt.Sprintf("web-%d", i), ts.OnNode("mvt-node"), ts.ConsumedMovement(name),
			ts.OwnedBy("ReplicaSet", "web", string(rs.UID))))
		create(t, p)
		pods = append(pods, p)
	}
	actual := func(want ...string) func() (bool, string) {
		return func() (bool, string) {
			m := &v1alpha1.Movement{}
			if err := env.Client.Get(ctx(), types.NamespacedName{Name: name}, m); err != nil {
				return false, err.Error()
			}
			var got []string
			for _, o := range m.Status.Owners {
				for _, n := range o.Nodes {
					for _, p := range n.ActualPods {
						got = append(got, n.Node+"/"+p.Name)
					}
				}
			}
			ok := slices.Equal(got, want) && slices.Contains(m.Status.NotifiedSchedulers, "mc-e2e")
			return ok, fmt.Sprintf("actual %v, notified %v", got, m.Status.NotifiedSchedulers)
		}
	}
	eventually(t, "both pods are actual pods", actual("mvt-node/web-0", "mvt-node/web-1"))
	if left := op.Cache.MovementSuggestions(ownerKeyOf(ns, "web")); len(left) != 0 {
		t.Errorf("suggestions left %v, want none", left)
	}
	deleteNow(t, pods[0])
	eventually(t, "the deleted pod is no longer an actual pod", actual("mvt-node/web-1"))
	if left := op.Cache.MovementSuggestions(ownerKeyOf(ns, "web")); left["mvt-node"] != 1 {
		t.Errorf("suggestions left %v, want mvt-node: 1", left)
	}
	deleteNow(t, pods[1])
}
