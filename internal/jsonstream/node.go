package jsonstream

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Node writes the view of a node, byte for byte what encoding nodestore.DumpNode(info)
// writes, without building it. The view holds seven resource lists (maps of Quantity,
// encoded through reflection) and a "namespace/name" string per pod: at 5,000 nodes that
// was 26 of the 31 MB one dump allocated, and on two CPUs each collection a dump brings
// closer is what the events wait for (BenchmarkDumpLag: with one collection in ten seconds
// instead of three to five, the lag p99 during dumps fell from 14–16 ms to 6–8 ms).
// TestStream_NodeIsWhatDumpNodeEncodesTo keeps the bytes the same.
func (s *Stream) Node(info *store.NodeInfo) {
	s.yield.Step()
	s.Open()
	s.Key("sources")
	s.openArray()
	for _, src := range []struct {
		name string
		held bool
	}{{"Node", info.Node != nil}, {"NMNode", info.NMNode != nil}, {"CustomNodeResource", info.CNR != nil}} {
		if src.held {
			s.element()
			s.writeString(src.name)
		}
	}
	s.closeArray()
	for _, r := range []struct {
		key string
		res *store.Resources
	}{
		{"allocatable", &info.Allocatable}, {"capacity", &info.Capacity}, {"requested", &info.Requested},
		{"bestEffortAllocatable", &info.BestEffortAllocatable}, {"bestEffortRequested", &info.BestEffortRequested},
		{"reserved", &info.Reserved}, {"draRequested", &info.DRARequested},
	} {
		s.Key(r.key)
		s.resources(r.res)
	}
	s.Key("pods")
	s.podKeys(info.Pods)
	s.Key("reservations")
	reservations := make([]string, 0, len(info.Placeholders)) // few: nodes rarely hold any
	for _, p := range info.Placeholders {
		key, _ := store.PlaceholderOf(p)
		reservations = append(reservations, key.String())
	}
	slices.Sort(reservations)
	s.openArray()
	for _, r := range reservations {
		s.element()
		s.writeString(r)
	}
	s.closeArray()
	s.Key("generation")
	s.w.Write(strconv.AppendInt(s.scratch[:0], info.Generation, 10))
	s.Close()
}

// podKeys writes the pods' "namespace/name" keys as a sorted array of strings, sorting a
// reused copy of the pointers by the keys they would join to.
func (s *Stream) podKeys(pods []*corev1.Pod) {
	s.pods = append(s.pods[:0], pods...)
	slices.SortFunc(s.pods, func(a, b *corev1.Pod) int {
		if a.Namespace == b.Namespace {
			return strings.Compare(a.Name, b.Name)
		}
		return compareJoined(a.Namespace, a.Name, b.Namespace, b.Name)
	})
	s.openArray()
	for _, p := range s.pods {
		s.element()
		s.writeParts(p.Namespace, "/", p.Name)
	}
	s.closeArray()
	clear(s.pods) // the stream holds no pod past the node (the part's copies do)
}

// compareJoined compares a1+"/"+a2 with b1+"/"+b2 without building them (a namespace that
// is the prefix of another sorts by the byte after it against "/").
func compareJoined(a1, a2, b1, b2 string) int {
	a, b := [3]string{a1, "/", a2}, [3]string{b1, "/", b2}
	i, j := 0, 0
	x, y := a[0], b[0]
	for {
		for x == "" && i < 3 {
			if i++; i < 3 {
				x = a[i]
			}
		}
		for y == "" && j < 3 {
			if j++; j < 3 {
				y = b[j]
			}
		}
		switch {
		case i == 3 && j == 3:
			return 0
		case i == 3:
			return -1
		case j == 3:
			return 1
		}
		n := min(len(x), len(y))
		if c := strings.Compare(x[:n], y[:n]); c != 0 {
			return c
		}
		x, y = x[n:], y[n:]
	}
}

// amount is one resource of a list, as Resources.ResourceList makes its Quantity.
type amount struct {
	name   corev1.ResourceName
	value  int64
	milli  bool
	format resource.Format
}

// resources writes r as encoding r.ResourceList() writes it: an object of its non-zero
// amounts sorted by name, each the Quantity's canonical string.
func (s *Stream) resources(r *store.Resources) {
	list := s.amounts[:0]
	for _, a := range []amount{
		{corev1.ResourceCPU, r.MilliCPU, true, resource.DecimalSI},
		{corev1.ResourceMemory, r.Memory, false, resource.BinarySI},
		{corev1.ResourceEphemeralStorage, r.EphemeralStorage, false, resource.BinarySI},
		{corev1.ResourcePods, r.Pods, false, resource.DecimalSI},
	} {
		if a.value != 0 {
			list = append(list, a)
		}
	}
	for name, v := range r.Scalar {
		if v != 0 {
			// As ResourceList does: a scalar amount of a built-in's name replaces it.
			list = slices.DeleteFunc(list, func(a amount) bool { return a.name == name })
			list = append(list, amount{name, v, false, resource.DecimalSI})
		}
	}
	slices.SortFunc(list, func(a, b amount) int { return strings.Compare(string(a.name), string(b.name)) })
	s.Open()
	for _, a := range list {
		s.Key(string(a.name))
		var q resource.Quantity
		if a.milli {
			q = *resource.NewMilliQuantity(a.value, a.format)
		} else {
			q = *resource.NewQuantity(a.value, a.format)
		}
		// What Quantity.MarshalJSON writes, into the stream's scratch space.
		number, suffix := q.CanonicalizeBytes(s.scratch[:0])
		s.w.WriteByte('"')
		s.w.Write(number)
		s.w.Write(suffix)
		s.w.WriteByte('"')
	}
	s.Close()
	s.amounts = list[:0]
}
