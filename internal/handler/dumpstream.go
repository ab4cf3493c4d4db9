package handler

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podstore"
	"github.com/seed0f91f25e/multicache/internal/yield"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// dumpDuty is the share of the wall time a dump (WriteDump) works: after each part it rests
// (yield.Pacer) as long as it takes to bring the time it worked since its last rest down to
// that share. A dump at 150,000 pods keeps a CPU busy for over a second; on a machine whose
// CPUs are all taken (bench-e2e's two, shared with the API server and etcd) the event path
// then waits for a CPU while the dump runs: in BenchmarkDumpLag the tail of the label
// updates' lag was the updater's wake-up, not the lock nor the garbage collector. Resting
// leaves the CPU to the rest of the machine between parts: the dump takes longer, the
// events do not. The invariant check's parts rest the same way.
//
// The time blocked writing to the client is not work: BenchmarkDumpLag's "http-slow" (a
// client at 16 MiB/s) completed as many dumps either way, the client's pace bounding both,
// with no change of the lag beyond the noise.
var dumpDuty = 0.5

// DumpLayout is how WriteDump lays the document out.
type DumpLayout int

const (
	// DumpCompact writes JSON without whitespace, as json.Encoder writes a value: what a
	// program reads. Indenting as json.Encoder's SetIndent does was half of a dump's CPU at
	// 150,000 pods, and a third more bytes.
	DumpCompact DumpLayout = iota
	// DumpIndented indents by two spaces, as json.Encoder with SetIndent("", "  "): what a
	// person reads (the debug server's ?pretty=true).
	DumpIndented
)

// WriteDump writes the view of every store that the debug server serves at /debug/cache
// (debug.Dump is its schema): the generation it started at, the component, the enabled
// stores in fan-out order, then each store's Dump by its key (an empty object when the
// store is disabled) and the extensions by name. It writes JSON laid out as layout says, to
// w while it reads the cache: the nodes and the pods are copied a part at a time
// (nodesPerHold, podsPerHold, each under a hold of the read lock of its own) and each part
// is written before the next is copied, so the whole document is never held (at 150,000
// pods it was hundreds of megabytes) and events are applied between two parts. Each node
// and each pod is shown as it was at one moment, but the dump is not one moment of the
// whole cache: a consistent view is a Snapshot. It holds only the pods' keys, read first.
// The maps are written in key order, as encoding/json writes maps. It stops at the first
// error writing to w or when ctx is done.
//
// A dump gives way to the events: it rests between parts (dumpDuty), so that it leaves the
// CPU it would take to the rest of the machine half of the time.
func (h *Handler) WriteDump(ctx context.Context, w io.Writer, layout DumpLayout) error {
	pace := yield.NewPacer(dumpDuty)
	out := newJSONStream(pace.Writer(w), layout == DumpIndented)
	out.pace = pace
	h.mu.RLock()
	generation := h.config.Generations().Current()
	h.mu.RUnlock()

	out.open()
	out.field("generation", generation)
	out.field("componentName", h.config.ComponentName())
	out.field("schedulerName", h.config.SchedulerType())
	if h.config.SubClusterKey() != "" {
		out.field("subCluster", h.config.SubClusterKey()+"="+h.config.SubCluster())
	}
	out.field("stores", h.StoreNames())

	// The other stores are copied first, each under its own hold: a
	// reservation is then never newer than the nodes that follow (a reader that checks a
	// node's placeholders against the reservations must not see a reservation the node has
	// not caught up with; chaos found one copied seconds after the nodes, Expired, while
	// the node part still held its placeholder).
	type part struct {
		key  string
		view any
	}
	var others []part
	for _, f := range []struct {
		key  string
		name stores.Name
	}{
		{"podGroups", stores.PodGroupStoreName},
		{"pdbs", stores.PDBStoreName},
		{"movements", stores.MovementStoreName},
		{"reservations", stores.ReservationStoreName},
		{"devices", stores.DeviceStoreName},
	} {
		var v any = struct{}{}
		if s, ok := h.byName[f.name]; ok {
			v = h.dumpStore(s)
		}
		others = append(others, part{f.key, v})
	}

	out.key("nodes")
	if err := h.writeNodes(ctx, out); err != nil {
		return err
	}
	out.key("pods")
	if err := h.writePods(ctx, out); err != nil {
		return err
	}
	for _, p := range others {
		out.field(p.key, p.view)
	}
	var extensions []store.Store
	for _, s := range h.stores {
		if !slices.Contains(stores.FanOutOrder, s.Name()) {
			extensions = append(extensions, s)
		}
	}
	if len(extensions) > 0 {
		slices.SortFunc(extensions, func(a, b store.Store) int { return strings.Compare(string(a.Name()), string(b.Name())) })
		out.key("extensions")
		out.open()
		for _, s := range extensions {
			out.field(string(s.Name()), h.dumpStore(s))
		}
		out.close()
	}
	out.close()
	return out.end()
}

// dumpStore is the view of a store other than the NodeStore and the PodStore, built under a
// hold of the read lock of its own.
func (h *Handler) dumpStore(s store.Store) any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Dump()
}

// writeNodes writes the NodeStore's view, nodesPerHold nodes per part.
func (h *Handler) writeNodes(ctx context.Context, out *jsonStream) error {
	h.mu.RLock()
	names := h.nodes.Names()
	h.mu.RUnlock()
	slices.Sort(names)
	// One part's copies, reused from part to part (CopyInto reuses their slices).
	clones := make([]store.NodeInfo, nodesPerHold)
	n := 0
	out.open()
	err := h.nodesInParts(names, func(infos []*store.NodeInfo) {
		if len(infos) > len(clones) {
			clones = make([]store.NodeInfo, len(infos))
		}
		for i, info := range infos {
			info.CopyInto(&clones[i])
		}
		n = len(infos)
	}, func() error {
		for i := range clones[:n] {
			out.key(clones[i].Name)
			out.node(&clones[i])
		}
		return out.flushPart(ctx)
	})
	out.close()
	return err
}

// writePods writes the PodStore's view, podsPerHold pods per part.
func (h *Handler) writePods(ctx context.Context, out *jsonStream) error {
	statuses := make([]podstore.KeyedStatus, 0, podsPerHold)
	var view podstore.PodDump
	out.open()
	err := h.podsInParts(h.podKeys(), func(key types.NamespacedName, e *podstore.Entry) {
		statuses = append(statuses, podstore.KeyedStatus{Key: key, Status: e.PodStatus})
	}, func() error {
		for _, st := range statuses {
			out.keyParts(st.Key.Namespace, "/", st.Key.Name)
			// Through one pointer (encoded as the value): a value in an interface is
			// allocated once per pod.
			view = podstore.DumpPod(st.Status)
			out.encode(&view)
		}
		statuses = statuses[:0]
		return out.flushPart(ctx)
	})
	out.close()
	return err
}

// jsonStream writes one JSON document an object member at a time, as json.Encoder writes a
// whole value: compact, or indented as with SetIndent("", "  "). Writes go through a
// bufio.Writer, whose first error flushPart and end return.
type jsonStream struct {
	w        *bufio.Writer
	buf      bytes.Buffer
	enc      *json.Encoder
	indented bool
	// members counts, for every object open, the members written so far.
	members []int
	// indents are the line prefixes by depth, built once.
	indents []string
	err     error
	// pace, when not nil, rests after each part (flushPart).
	pace *yield.Pacer
	// yield gives way to waiting goroutines as values are encoded (between parts, the
	// lock released).
	yield yield.Yielder
	// scratch, pods and amounts are reused by the node writer (dumpnode.go).
	scratch []byte
	pods    []*corev1.Pod
	amounts []amount
}

func newJSONStream(w io.Writer, indented bool) *jsonStream {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10), indented: indented, scratch: make([]byte, 0, 64)}
	s.enc = json.NewEncoder(&s.buf)
	return s
}

// open starts an object (after a key, or as the document).
func (s *jsonStream) open() {
	s.w.WriteByte('{')
	s.members = append(s.members, 0)
}

// close ends the innermost object.
func (s *jsonStream) close() { s.closeWith('}') }

// openArray starts an array (after a key, or as an element); element starts each element.
func (s *jsonStream) openArray() {
	s.w.WriteByte('[')
	s.members = append(s.members, 0)
}

// closeArray ends the innermost array.
func (s *jsonStream) closeArray() { s.closeWith(']') }

// closeWith ends the innermost object or array with c.
func (s *jsonStream) closeWith(c byte) {
	n := s.members[len(s.members)-1]
	s.members = s.members[:len(s.members)-1]
	if n > 0 {
		s.newline()
	}
	s.w.WriteByte(c)
}

// element starts an element of the innermost array (or a member of the innermost object:
// its key follows); its value follows.
func (s *jsonStream) element() {
	last := len(s.members) - 1
	if s.members[last] > 0 {
		s.w.WriteByte(',')
	}
	s.members[last]++
	s.newline()
}

// key starts a member of the innermost object; its value follows.
func (s *jsonStream) key(k string) {
	s.element()
	s.writeString(k)
	s.colon()
}

// colon ends a member's key.
func (s *jsonStream) colon() {
	if s.indented {
		s.w.WriteString(": ")
		return
	}
	s.w.WriteByte(':')
}

// keyParts starts a member keyed by the joined parts (a pod's "namespace/name"), without
// building the key.
func (s *jsonStream) keyParts(a, sep, b string) {
	s.element()
	s.writeParts(a, sep, b)
	s.colon()
}

// writeParts writes the string a+sep+b as encoding/json does, building it only when a byte
// needs escaping.
func (s *jsonStream) writeParts(a, sep, b string) {
	if !plainJSON(a) || !plainJSON(sep) || !plainJSON(b) {
		s.encode(a + sep + b)
		return
	}
	s.w.WriteByte('"')
	s.w.WriteString(a)
	s.w.WriteString(sep)
	s.w.WriteString(b)
	s.w.WriteByte('"')
}

// writeString writes k as encoding/json encodes a string: quoted as is when no byte needs
// escaping (object names never do), else through the encoder.
func (s *jsonStream) writeString(k string) {
	if !plainJSON(k) {
		s.encode(k)
		return
	}
	s.w.WriteByte('"')
	s.w.WriteString(k)
	s.w.WriteByte('"')
}

// plainJSON reports whether encoding/json writes k between quotes unchanged: printable ASCII
// but the quote, the backslash and what it escapes for HTML (<, >, &).
func plainJSON(k string) bool {
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// field writes a member whose value is encoded whole.
func (s *jsonStream) field(k string, v any) {
	s.key(k)
	s.encode(v)
}

// encode writes v, its lines indented to the depth of the innermost object when the stream
// is indented.
func (s *jsonStream) encode(v any) {
	s.yield.Step()
	s.buf.Reset()
	if s.indented {
		s.enc.SetIndent(s.indent(), "  ")
	}
	if err := s.enc.Encode(v); err != nil && s.err == nil {
		s.err = err
	}
	s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

// indent is the prefix of a line at the depth of the innermost object.
func (s *jsonStream) indent() string {
	for len(s.indents) <= len(s.members) {
		s.indents = append(s.indents, strings.Repeat("  ", len(s.indents)))
	}
	return s.indents[len(s.members)]
}

func (s *jsonStream) newline() {
	if !s.indented {
		return
	}
	s.w.WriteByte('\n')
	for range len(s.members) {
		s.w.WriteString("  ")
	}
}

// flushPart writes what is buffered (a bufio.Writer keeps its first error, returned here),
// rests (pace) and reports the first error so far, or ctx's when it is done: the stream
// stops there.
func (s *jsonStream) flushPart(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	if s.pace != nil {
		err := s.pace.Rest(ctx)
		s.yield.Reset() // a rest gave the P away already
		return err
	}
	return ctx.Err()
}

// end finishes the document (a newline, as json.Encoder ends one) and writes what is
// buffered.
func (s *jsonStream) end() error {
	s.w.WriteByte('\n')
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}
