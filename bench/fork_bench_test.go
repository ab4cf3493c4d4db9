package bench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/seed0f91f25e/multicache/internal/publicreader"
	mc "github.com/seed0f91f25e/multicache/pkg/multicache"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// The what-if sequence a descheduler or an autoscaler runs: a fork of the cluster, 100
// hypothetical moves (a pod removed from its node and added to another), a read of every
// node touched, and a revert. multicache does it on a Fork of a Snapshot; the anchor is
// what cluster-autoscaler's basic snapshot does with kube-scheduler's NodeInfos: deep-copy
// every NodeInfo, apply the moves to the copies, read them.

const forkMoves = 100

// forkWorld is the cluster of the fork benchmark, built once: forkNodes nodes with
// forkPerNode pods each, in multicache (a snapshot) and as kube-scheduler NodeInfos.
type forkWorld struct {
	w    *Workload
	snap *mc.Snapshot
	kube map[string]*framework.NodeInfo
}

var (
	forkOnce  sync.Once
	forkShare *forkWorld
)

func sharedForkWorld(b *testing.B, nodes, perNode int) *forkWorld {
	forkOnce.Do(func() {
		w := NewWorkload(nodes, perNode)
		h := NewMulticache(nil)
		kube := map[string]*framework.NodeInfo{}
		for _, n := range w.Nodes {
			if err := h.Add(n); err != nil {
				panic(err)
			}
			kube[n.Name] = framework.NewNodeInfo()
			kube[n.Name].SetNode(n)
		}
		for _, p := range w.Versions[0] {
			if err := h.Add(p); err != nil {
				panic(err)
			}
			kube[p.Spec.NodeName].AddPod(p)
		}
		r := publicreader.Of(h).(mc.Reader)
		snap := r.NewSnapshot(mc.SnapshotOptions{})
		if err := r.UpdateSnapshot(snap); err != nil {
			panic(err)
		}
		forkShare = &forkWorld{w: w, snap: snap, kube: kube}
	})
	return forkShare
}

// move is the i-th hypothetical move: a pod spread over the cluster, to the next node.
func (f *forkWorld) move(i int) (*corev1.Pod, string) {
	pods := f.w.Versions[0]
	pod := pods[(i*7919)%len(pods)]
	next := f.w.Nodes[(i*7919+1)%len(f.w.Nodes)].Name
	return pod, next
}

func BenchmarkFork_100Moves(b *testing.B) {
	world := sharedForkWorld(b, 5000, 30)
	b.Run("multicache-fork", func(b *testing.B) {
		runtime.GC() // the world's construction is not the fork's garbage
		b.ReportAllocs()
		for b.Loop() {
			f := world.snap.Fork()
			for i := range forkMoves {
				pod, to := world.move(i)
				if err := f.RemovePod(store.PodKey(pod)); err != nil {
					b.Fatal(err)
				}
				if err := f.AddPod(pod, to); err != nil {
					b.Fatal(err)
				}
			}
			for i := range forkMoves {
				pod, to := world.move(i)
				for _, n := range []string{pod.Spec.NodeName, to} {
					if info, ok := f.NodeInfo(n); !ok || info.Requested.MilliCPU == 0 {
						b.Fatalf("node %s: %v", n, ok)
					}
				}
			}
			f.Revert()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/forkMoves, "ns/move")
	})
	b.Run("kube-scheduler-deepcopy", func(b *testing.B) {
		runtime.GC()
		b.ReportAllocs()
		for b.Loop() {
			clone := make(map[string]*framework.NodeInfo, len(world.kube))
			for name, n := range world.kube {
				clone[name] = n.Snapshot().(*framework.NodeInfo)
			}
			for i := range forkMoves {
				pod, to := world.move(i)
				if err := clone[pod.Spec.NodeName].RemovePod(logr.Discard(), pod); err != nil {
					b.Fatal(err)
				}
				moved := pod.DeepCopy()
				moved.Spec.NodeName = to
				clone[to].AddPod(moved)
			}
			for i := range forkMoves {
				pod, to := world.move(i)
				for _, n := range []string{pod.Spec.NodeName, to} {
					if clone[n].Requested.MilliCPU == 0 {
						b.Fatalf("node %s", n)
					}
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/forkMoves, "ns/move")
	})
}

// TestFork_TheBenchmarksSequenceAgreesWithKubeScheduler: after the benchmark's moves, every
// touched node's requests in the fork are kube-scheduler's on its copies (small world).
func TestFork_TheBenchmarksSequenceAgreesWithKubeScheduler(t *testing.T) {
	w := NewWorkload(50, 4)
	h := NewMulticache(nil)
	kube := map[string]*framework.NodeInfo{}
	for _, n := range w.Nodes {
		if err := h.Add(n); err != nil {
			t.Fatal(err)
		}
		kube[n.Name] = framework.NewNodeInfo()
		kube[n.Name].SetNode(n)
	}
	for _, p := range w.Versions[0] {
		if err := h.Add(p); err != nil {
			t.Fatal(err)
		}
		kube[p.Spec.NodeName].AddPod(p)
	}
	r := publicreader.Of(h).(mc.Reader)
	snap := r.NewSnapshot(mc.SnapshotOptions{})
	if err := r.UpdateSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	world := &forkWorld{w: w, snap: snap, kube: kube}
	f := snap.Fork()
	for i := range 20 {
		pod, to := world.move(i)
		if pod.Spec.NodeName == to {
			continue
		}
		if err := f.RemovePod(store.PodKey(pod)); err != nil {
			t.Fatal(err)
		}
		if err := f.AddPod(pod, to); err != nil {
			t.Fatal(err)
		}
		if err := kube[pod.Spec.NodeName].RemovePod(logr.Discard(), pod); err != nil {
			t.Fatal(err)
		}
		moved := pod.DeepCopy()
		moved.Spec.NodeName = to
		kube[to].AddPod(moved)
	}
	for name, k := range kube {
		info, _ := f.NodeInfo(name)
		if got, want := fmt.Sprint(info.Requested.MilliCPU, info.Requested.Memory, len(info.Pods)),
			fmt.Sprint(k.Requested.MilliCPU, k.Requested.Memory, len(k.Pods)); got != want {
			t.Errorf("node %s: fork cpu, memory, pods %s, kube-scheduler %s", name, got, want)
		}
	}
}
