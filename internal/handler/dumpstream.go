package handler

import (
	"context"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/jsonstream"
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
	out := jsonstream.New(w, layout == DumpIndented, yield.NewPacer(dumpDuty))
	h.mu.RLock()
	generation := h.config.Generations().Current()
	h.mu.RUnlock()

	out.Open()
	out.Field("generation", generation)
	out.Field("componentName", h.config.ComponentName())
	out.Field("schedulerName", h.config.SchedulerType())
	if h.config.SubClusterKey() != "" {
		out.Field("subCluster", h.config.SubClusterKey()+"="+h.config.SubCluster())
	}
	out.Field("stores", h.StoreNames())

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

	out.Key("nodes")
	if err := h.writeNodes(ctx, out); err != nil {
		return err
	}
	out.Key("pods")
	if err := h.writePods(ctx, out); err != nil {
		return err
	}
	for _, p := range others {
		out.Field(p.key, p.view)
	}
	var extensions []store.Store
	for _, s := range h.stores {
		if !slices.Contains(stores.FanOutOrder, s.Name()) {
			extensions = append(extensions, s)
		}
	}
	if len(extensions) > 0 {
		slices.SortFunc(extensions, func(a, b store.Store) int { return strings.Compare(string(a.Name()), string(b.Name())) })
		out.Key("extensions")
		out.Open()
		for _, s := range extensions {
			out.Field(string(s.Name()), h.dumpStore(s))
		}
		out.Close()
	}
	out.Close()
	return out.End()
}

// dumpStore is the view of a store other than the NodeStore and the PodStore, built under a
// hold of the read lock of its own.
func (h *Handler) dumpStore(s store.Store) any {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return s.Dump()
}

// writeNodes writes the NodeStore's view, nodesPerHold nodes per part.
func (h *Handler) writeNodes(ctx context.Context, out *jsonstream.Stream) error {
	h.mu.RLock()
	names := h.nodes.Names()
	h.mu.RUnlock()
	slices.Sort(names)
	// One part's copies, reused from part to part (CopyInto reuses their slices).
	clones := make([]store.NodeInfo, nodesPerHold)
	n := 0
	out.Open()
	err := h.nodesInParts(nodesPerHold, names, func(infos []*store.NodeInfo) {
		if len(infos) > len(clones) {
			clones = make([]store.NodeInfo, len(infos))
		}
		for i, info := range infos {
			info.CopyInto(&clones[i])
		}
		n = len(infos)
	}, func() error {
		for i := range clones[:n] {
			out.Key(clones[i].Name)
			out.Node(&clones[i])
		}
		return out.FlushPart(ctx)
	})
	out.Close()
	return err
}

// writePods writes the PodStore's view, podsPerHold pods per part.
func (h *Handler) writePods(ctx context.Context, out *jsonstream.Stream) error {
	statuses := make([]podstore.KeyedStatus, 0, podsPerHold)
	var view podstore.PodDump
	out.Open()
	err := h.podsInParts(h.podKeys(), func(key types.NamespacedName, e *podstore.Entry) {
		statuses = append(statuses, podstore.KeyedStatus{Key: key, Status: e.PodStatus})
	}, func() error {
		for _, st := range statuses {
			out.KeyParts(st.Key.Namespace, "/", st.Key.Name)
			// Through one pointer (encoded as the value): a value in an interface is
			// allocated once per pod.
			view = podstore.DumpPod(st.Status)
			out.Encode(&view)
		}
		statuses = statuses[:0]
		return out.FlushPart(ctx)
	})
	out.Close()
	return err
}
