package plugin

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestFirstUnknown_NamesTheCachedPodTheSchedulerNoLongerHas: whether a node holds a few
// pods (compared pairwise) or many (through a map), the cached pod the scheduler's node
// info lacks is found, unless a preemption what-if removed it.
func TestFirstUnknown_NamesTheCachedPodTheSchedulerNoLongerHas(t *testing.T) {
	for _, n := range []int{3, 40} {
		t.Run(fmt.Sprintf("%d pods", n), func(t *testing.T) {
			var cached []*corev1.Pod
			var infos []fwk.PodInfo
			for i := range n {
				pod := cpuPod(fmt.Sprintf("p%d", i), "1")
				cached = append(cached, pod)
				if i != n/2 {
					pi, err := framework.NewPodInfo(pod)
					if err != nil {
						t.Fatal(err)
					}
					infos = append(infos, pi)
				}
			}
			if got := firstUnknown(cached, infos, nil); got != cached[n/2] {
				t.Errorf("firstUnknown = %v, want %s", got, cached[n/2].Name)
			}
			if got := firstUnknown(cached, infos, map[types.UID]bool{cached[n/2].UID: true}); got != nil {
				t.Errorf("firstUnknown = %s, want none: the what-if removed it", got.Name)
			}
			if got := firstUnknown(cached[:n/2], infos, nil); got != nil {
				t.Errorf("firstUnknown = %s, want none: the scheduler has every cached pod", got.Name)
			}
		})
	}
}

// TestLagMemo_AnswersAgainOnlyWhenEitherSideOfTheNodeChanged: the answer is computed once
// per node and pair of generations; a change on either side computes it anew.
func TestLagMemo_AnswersAgainOnlyWhenEitherSideOfTheNodeChanged(t *testing.T) {
	var memo lagMemo
	gone := cpuPod("gone", "1")
	calls := 0
	compute := func(p *corev1.Pod) func() *corev1.Pod { return func() *corev1.Pod { calls++; return p } }
	if got := memo.answer("n1", lagKey{1, 1}, compute(gone)); got != gone || calls != 1 {
		t.Fatalf("first answer %v after %d computations, want gone after 1", got, calls)
	}
	if got := memo.answer("n1", lagKey{1, 1}, compute(nil)); got != gone || calls != 1 {
		t.Errorf("same generations: %v after %d computations, want the remembered answer", got, calls)
	}
	for i, key := range []lagKey{{2, 1}, {2, 2}} {
		if got := memo.answer("n1", key, compute(nil)); got != nil || calls != 2+i {
			t.Errorf("generations %v: %v after %d computations, want nil computed anew", key, got, calls)
		}
	}
	if got := memo.answer("n2", lagKey{2, 2}, compute(gone)); got != gone {
		t.Errorf("another node at the same generations: %v, want its own answer", got)
	}
}

// TestLagMemo_PruneForgetsOnlyTheNodesThatAreGone: a deleted node's answer goes; a live
// node's stays remembered.
func TestLagMemo_PruneForgetsOnlyTheNodesThatAreGone(t *testing.T) {
	var memo lagMemo
	gone := cpuPod("gone", "1")
	for _, n := range []string{"live", "deleted"} {
		memo.answer(n, lagKey{1, 1}, func() *corev1.Pod { return gone })
	}
	if n := memo.prune(func(node string) bool { return node == "live" }); n != 1 {
		t.Errorf("pruned %d, want 1", n)
	}
	if _, ok := memo.m.Load("deleted"); ok {
		t.Error("the deleted node's answer stayed")
	}
	recomputed := false
	memo.answer("live", lagKey{1, 1}, func() *corev1.Pod { recomputed = true; return nil })
	if recomputed {
		t.Error("the live node's answer was forgotten")
	}
}

// keeperReader keeps gone's place for the pods named in keptFor; the rest of the Reader is
// unused.
type keeperReader struct {
	multicache.Reader
	gone    *corev1.Pod
	keptFor map[string]bool
}

func (r keeperReader) KeepsPlaceFor(leaving, pod *corev1.Pod) bool {
	return leaving == r.gone && r.keptFor[pod.Name]
}

// TestLaggingStatus_ANodeTheCacheLagsOnIsOpenOnlyToThePodItsPlaceIsKeptFor: the scheduler
// saw a pod leave a node before the cache did. The replacement its place is to be kept for
// may use the node at once (it would consume that place), if it asks no more than the pod
// held and no other pod leaving the node is still in the cache (its place may be kept for
// another). Any other pod is turned away and tried again within a second.
func TestLaggingStatus_ANodeTheCacheLagsOnIsOpenOnlyToThePodItsPlaceIsKeptFor(t *testing.T) {
	gone := cpuPod("gone", "1")
	sole := func() bool { return true }
	notSole := func() bool { return false }
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		sole  func() bool
		admit bool
	}{
		{"the replacement", cpuPod("replacement", "1"), sole, true},
		{"the replacement asking for more", cpuPod("replacement", "2"), sole, false},
		{"the replacement beside another going pod", cpuPod("replacement", "1"), notSole, false},
		{"an unrelated pod", cpuPod("other", "1"), sole, false},
	} {
		p := &Plugin{reader: keeperReader{gone: gone, keptFor: map[string]bool{"replacement": true}}}
		s := p.laggingStatus(tc.pod, gone, store.Accounting{}.PodRequests(tc.pod), tc.sole)
		switch {
		case tc.admit && (s != nil || len(p.retry.pods) != 0):
			t.Errorf("%s: turned away (%v, retries %v)", tc.name, s, p.retry.pods)
		case !tc.admit && (s == nil || s.Code() != fwk.Unschedulable || s.Reasons()[0] != ReasonLagging || len(p.retry.pods) != 1):
			t.Errorf("%s: got %v with retries %v, want Unschedulable: %s, tried again soon", tc.name, s, p.retry.pods, ReasonLagging)
		}
	}
}
