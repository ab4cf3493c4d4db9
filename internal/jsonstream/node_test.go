package jsonstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestStream_NodeIsWhatDumpNodeEncodesTo: for nodes with every part of the view filled
// in turn (each source, every kind of amount including scalar resources that sort between
// the built-in names, amounts in milli-units and odd byte counts, negative amounts, pods in
// namespaces one the prefix of another, placeholders of reservations, names that need
// escaping), Node writes, compact and indented at depth, byte for byte what
// json.Encoder writes of nodestore.DumpNode.
func TestStream_NodeIsWhatDumpNodeEncodesTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	namespaces := []string{"a", "a-b", "ab", "a.b", "ns", "team", "team-x", "x<y>&"}
	// Scalar amounts named like a built-in ("cpu", "pods") replace it, as in ResourceList;
	// Resources built by ResourcesFromList never hold one.
	scalars := []corev1.ResourceName{"example.com/gpu", "hugepages-2Mi", "nvidia.com/gpu", "attachable-volumes-csi", "d", "cpu", "pods"}
	amounts := func() store.Resources {
		r := store.Resources{}
		pick := func(v int64) int64 {
			switch rng.IntN(4) {
			case 0:
				return 0
			case 1:
				return -v
			}
			return v
		}
		r.MilliCPU = pick(rng.Int64N(100_000))
		r.Memory = pick(rng.Int64N(1 << 40))
		r.EphemeralStorage = pick([]int64{1 << 30, 1500 << 20, 999, 1_000_000}[rng.IntN(4)])
		r.Pods = pick(rng.Int64N(300))
		if rng.IntN(2) == 0 {
			r.Scalar = map[corev1.ResourceName]int64{}
			for _, name := range scalars {
				if rng.IntN(2) == 0 {
					r.Scalar[name] = pick(rng.Int64N(1 << 34))
				}
			}
		}
		return r
	}
	for i := range 300 {
		info := &store.NodeInfo{
			Name: fmt.Sprintf("n-%d", i), Generation: rng.Int64N(1 << 40),
			Allocatable: amounts(), Capacity: amounts(), Requested: amounts(), BestEffortAllocatable: amounts(),
			BestEffortRequested: amounts(), Reserved: amounts(), DRARequested: amounts(),
		}
		if rng.IntN(2) == 0 {
			info.Node = ts.MakeNode(info.Name, "8", "32Gi")
		}
		if rng.IntN(2) == 0 {
			info.NMNode = &v1alpha1.NMNode{}
		}
		if rng.IntN(2) == 0 {
			info.CNR = &v1alpha1.CustomNodeResource{}
		}
		for j := range rng.IntN(40) {
			ns := namespaces[rng.IntN(len(namespaces))]
			info.Pods = append(info.Pods, ts.MakePod(ns, fmt.Sprintf("p-%d", rng.IntN(1000-j)), ts.OnNode(info.Name)))
		}
		for range rng.IntN(3) {
			r := ts.MakeReservation(namespaces[rng.IntN(len(namespaces))], fmt.Sprintf("r-%d", rng.IntN(50)), info.Name, "1", "1Gi", "app", "x")
			info.Placeholders = append(info.Placeholders, store.NewPlaceholderPod(r, info.Name))
		}
		view := nodestore.DumpNode(info)
		for _, indented := range []bool{false, true} {
			var got, want bytes.Buffer
			s := New(&got, indented, nil)
			s.Open()
			s.Key("nodes")
			s.Open()
			s.Key(info.Name)
			s.Node(info)
			s.Close()
			s.Close()
			must(t, s.End())
			enc := json.NewEncoder(&want)
			if indented {
				enc.SetIndent("", "  ")
			}
			must(t, enc.Encode(map[string]map[string]nodestore.NodeDump{"nodes": {info.Name: view}}))
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("node %d (indented %v): %s", i, indented, ts.FirstDifference(got.Bytes(), want.Bytes()))
			}
		}
	}
}

// TestCompareJoined_IsTheOrderOfTheJoinedStrings: for namespaces and names of bytes around
// "/" (one the prefix of another, empty, holding "/"), compareJoined orders as comparing
// a1+"/"+a2 with b1+"/"+b2 does.
func TestCompareJoined_IsTheOrderOfTheJoinedStrings(t *testing.T) {
	parts := []string{"", "a", "a-b", "a/b", "a.", "a0", "ab", "a/", "/", "b", "aa"}
	for _, a1 := range parts {
		for _, a2 := range parts {
			for _, b1 := range parts {
				for _, b2 := range parts {
					want := strings.Compare(a1+"/"+a2, b1+"/"+b2)
					if got := compareJoined(a1, a2, b1, b2); got != want {
						t.Fatalf("compareJoined(%q, %q, %q, %q) = %d, want %d", a1, a2, b1, b2, got, want)
					}
				}
			}
		}
	}
}
