package plugin

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// groupReader answers PodGroup from a fixed group; the rest of the Reader is unused.
type groupReader struct {
	multicache.Reader
	group store.PodGroup
}

func (r groupReader) PodGroup(key types.NamespacedName) (store.PodGroup, bool) {
	return r.group, key == r.group.Key
}

// waitingHandle holds waiting pods; the rest of the Handle is unused.
type waitingHandle struct {
	fwk.Handle
	waiting []*waitingPod
}

func (h waitingHandle) IterateOverWaitingPods(fn func(fwk.WaitingPod)) {
	for _, w := range h.waiting {
		fn(w)
	}
}

type waitingPod struct {
	fwk.WaitingPod
	pod               *corev1.Pod
	allowed, rejected bool
}

func (w *waitingPod) GetPod() *corev1.Pod        { return w.pod }
func (w *waitingPod) Allow(string)               { w.allowed = true }
func (w *waitingPod) Reject(string, string) bool { w.rejected = true; return true }
func member(name, group string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name),
		Labels: map[string]string{v1alpha1.PodGroupLabel: group}}}
}

// TestPermit_AGangWaitsUntilMinMemberArePlacedThenAllGo: with fewer than minMember placed
// a member waits for the permit timeout; the member that completes the gang goes and lets
// the waiting members of its group go, not those of another group; a failing member
// rejects them.
func TestPermit_AGangWaitsUntilMinMemberArePlacedThenAllGo(t *testing.T) {
	key := multicache.PodGroupKey("multicache", "ns", "train")
	group := store.PodGroup{Key: key, PodGroup: &v1alpha1.PodGroup{Spec: v1alpha1.PodGroupSpec{MinMember: 3}},
		Counts: store.PodGroupCounts{Scheduled: 2, Pending: 1}}
	sibling := &waitingPod{pod: member("w-0", "train")}
	stranger := &waitingPod{pod: member("x-0", "other")}
	args, err := DecodeArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plugin{reader: groupReader{group: group}, handle: waitingHandle{waiting: []*waitingPod{sibling, stranger}},
		args: args, run: &run{stopped: make(chan struct{})}, log: klog.Background()}
	ctx := context.Background()

	st, timeout := p.Permit(ctx, nil, member("w-1", "train"), "n1")
	if st.Code() != fwk.Wait || timeout != time.Duration(DefaultPermitWaitingTimeSeconds)*time.Second {
		t.Fatalf("2 of 3 placed: %v %s, want Wait for the default timeout", st, timeout)
	}
	group.Counts = store.PodGroupCounts{Scheduled: 3}
	p.reader = groupReader{group: group}
	if st, _ := p.Permit(ctx, nil, member("w-2", "train"), "n1"); !st.IsSuccess() {
		t.Fatalf("3 of 3 placed: %v, want Success", st)
	}
	if !sibling.allowed || stranger.allowed {
		t.Errorf("allowed: sibling %v, another group's pod %v; want only the sibling", sibling.allowed, stranger.allowed)
	}
	p.rejectWaitingSiblings(member("w-2", "train"), "test")
	if !sibling.rejected || stranger.rejected {
		t.Errorf("rejected: sibling %v, another group's pod %v; want only the sibling", sibling.rejected, stranger.rejected)
	}
	if st, _ := p.Permit(ctx, nil, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "alone"}}, "n1"); !st.IsSuccess() {
		t.Errorf("a pod of no group: %v, want Success", st)
	}
}

// TestPermit_AGroupsOwnScheduleTimeoutWinsOverTheDefault: a member of a group with
// scheduleTimeoutSeconds waits that long; a group without one, the plugin's default.
func TestPermit_AGroupsOwnScheduleTimeoutWinsOverTheDefault(t *testing.T) {
	args, err := DecodeArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		timeout *int32
		want    time.Duration
	}{
		{ptr.To[int32](5), 5 * time.Second},
		{nil, time.Duration(DefaultPermitWaitingTimeSeconds) * time.Second},
	} {
		group := store.PodGroup{Key: multicache.PodGroupKey("multicache", "ns", "train"),
			PodGroup: &v1alpha1.PodGroup{Spec: v1alpha1.PodGroupSpec{MinMember: 3, ScheduleTimeoutSeconds: tc.timeout}},
			Counts:   store.PodGroupCounts{Scheduled: 1, Pending: 2}}
		p := &Plugin{reader: groupReader{group: group}, handle: waitingHandle{}, args: args,
			run: &run{stopped: make(chan struct{})}, log: klog.Background()}
		st, got := p.Permit(context.Background(), nil, member("w-0", "train"), "n1")
		if st.Code() != fwk.Wait || got != tc.want {
			t.Errorf("scheduleTimeoutSeconds %d: %v for %s, want Wait for %s", ptr.Deref(tc.timeout, 0), st, got, tc.want)
		}
	}
}
