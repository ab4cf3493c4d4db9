package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// referenceDump is the document WriteDump streams, built whole under one hold of the lock
// from each store's Dump, for encoding/json to encode: the reference the stream must equal.
type referenceDump struct {
	Generation    int64         `json:"generation"`
	ComponentName string        `json:"componentName"`
	SchedulerName string        `json:"schedulerName"`
	SubCluster    string        `json:"subCluster,omitempty"`
	Stores        []stores.Name `json:"stores"`
	Nodes         any           `json:"nodes"`
	Pods          any           `json:"pods"`
	PodGroups     any           `json:"podGroups"`
	PDBs          any           `json:"pdbs"`
	Movements     any           `json:"movements"`
	Reservations  any           `json:"reservations"`
	Devices       any           `json:"devices"`
}

// encodeReference encodes the reference document of a quiet handler's state, as
// json.Encoder does (indented or compact).
func encodeReference(t testing.TB, h *Handler, indented bool) []byte {
	t.Helper()
	h.mu.RLock()
	part := func(n stores.Name) any {
		if s, ok := h.byName[n]; ok {
			return s.Dump()
		}
		return struct{}{}
	}
	d := referenceDump{Generation: h.config.Generations().Current(), ComponentName: h.config.ComponentName(),
		SchedulerName: h.config.SchedulerType(), Stores: h.StoreNames(),
		Nodes: part(stores.NodeStoreName), Pods: part(stores.PodStoreName), PodGroups: part(stores.PodGroupStoreName),
		PDBs: part(stores.PDBStoreName), Movements: part(stores.MovementStoreName),
		Reservations: part(stores.ReservationStoreName), Devices: part(stores.DeviceStoreName)}
	if h.config.SubClusterKey() != "" {
		d.SubCluster = h.config.SubClusterKey() + "=" + h.config.SubCluster()
	}
	h.mu.RUnlock()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indented {
		enc.SetIndent("", "  ")
	}
	must(t, enc.Encode(d))
	return buf.Bytes()
}

func writeDump(t testing.TB, h *Handler) []byte {
	t.Helper()
	var buf bytes.Buffer
	must(t, h.WriteDump(context.Background(), &buf, DumpIndented))
	return buf.Bytes()
}

// TestWriteDump_WritesTheDocumentTheStoresDumpsEncodeTo: on a cache at rest, with more than
// one part of nodes and of pods, namespaces one the prefix of another (whose keys sort
// otherwise than the namespaces do), a sub-cluster and every store holding something, the
// stream is byte for byte what encoding/json writes of every store's Dump taken at once.
func TestWriteDump_WritesTheDocumentTheStoresDumpsEncodeTo(t *testing.T) {
	h, _ := newQuietHandler(t, func(c *stores.Config) { c.SubClusterKey, c.SubCluster = "multicache.dev/shard", "a" })
	nodes := 2*nodesPerHold + 10
	for i := range nodes {
		must(t, h.Add(ts.MakeNode(fmt.Sprintf("n-%04d", i), "64", "256Gi")))
	}
	for i := range 2*podsPerHold + 100 {
		ns := []string{"a", "a-b", "ab", "ns"}[i%4]
		must(t, h.Add(ts.MakePod(ns, fmt.Sprintf("p-%05d", i), ts.OnNode(fmt.Sprintf("n-%04d", i%nodes)), ts.Requests("100m", "128Mi"))))
	}
	must(t, h.AssumePod(ts.MakePod("ns", "assumed", ts.OnNode("n-0001"), ts.Requests("1", "1Gi"))))
	must(t, h.Add(ts.MakePodGroup("ns", "group", 2)))
	must(t, h.Add(ts.MakePDB("ns", "budget", 1, "app", "x")))
	must(t, h.Add(ts.MakeReservation("ns", "rsv", "n-0002", "1", "1Gi", "app", "y")))

	got, want := writeDump(t, h), encodeReference(t, h, true)
	if !bytes.Equal(got, want) {
		t.Fatalf("the stream is not the stores' document %s", ts.FirstDifference(got, want))
	}
	// Compact: what json.Encoder writes without SetIndent.
	var compact bytes.Buffer
	must(t, h.WriteDump(context.Background(), &compact, DumpCompact))
	if wantCompact := encodeReference(t, h, false); !bytes.Equal(compact.Bytes(), wantCompact) {
		t.Fatalf("the compact stream is not the stores' document %s", ts.FirstDifference(compact.Bytes(), wantCompact))
	}
	if len(compact.Bytes()) >= len(got) {
		t.Errorf("the compact document is %d bytes, the indented one %d", len(compact.Bytes()), len(got))
	}
	var doc map[string]any
	must(t, json.Unmarshal(got, &doc))
	for _, key := range []string{"subCluster", "nodes", "pods", "podGroups", "pdbs", "reservations"} {
		if v, ok := doc[key]; !ok || fmt.Sprint(v) == "map[]" {
			t.Errorf("the document's %q is %v: the test does not fill every part", key, v)
		}
	}
	if pods := doc["pods"].(map[string]any); len(pods) != 2*podsPerHold+101 {
		t.Errorf("%d pods written, want %d", len(pods), 2*podsPerHold+101)
	}
}

// progressWriter records how much was written.
type progressWriter struct {
	bytes.Buffer
	// failAfter, when positive, fails every write once that many bytes were written.
	failAfter int
}

var errClosed = errors.New("the client went away")

func (w *progressWriter) Write(p []byte) (int, error) {
	if w.failAfter > 0 && w.Len()+len(p) > w.failAfter {
		return 0, errClosed
	}
	return w.Buffer.Write(p)
}

// TestWriteDump_StreamsPartByPartWhileEventsAreApplied applies events between two parts of
// a dump being written (every pod of the part to come moved to another node, a node added,
// one deleted): the document was written part by part (more of it at each part, the first
// part far from all of it), it is valid JSON, every pod is in it once, at the node it was on
// when its part was copied, and the cache is whole after.
func TestWriteDump_StreamsPartByPartWhileEventsAreApplied(t *testing.T) {
	nodes, pods := 2*nodesPerHold+10, 2*podsPerHold+100
	h, held := populated(t, nodes, pods)
	out := &progressWriter{}
	var written []int
	next := 0 // the first pod (in key order, the order they are written) not moved yet
	h.afterPart = func() {
		written = append(written, out.Len())
		must(t, h.Add(ts.MakeNode(fmt.Sprintf("late-%d", len(written)), "1", "1Gi")))
		if len(written) > nodes/nodesPerHold+1 && next < len(held) {
			// In the pods' parts: move the part that comes next.
			for i := next; i < min(next+podsPerHold, len(held)); i++ {
				moved := ts.MakePod("ns", held[i].Name, ts.OnNode("n-0000"), ts.Requests("100m", "128Mi"))
				must(t, h.Delete(held[i]))
				must(t, h.Add(moved))
				held[i] = moved
			}
			next += podsPerHold
		}
	}
	must(t, h.WriteDump(context.Background(), out, DumpIndented))
	h.afterPart = nil

	// The pods' keys are read in parts too (and nothing written then): count the parts
	// after which more of the document was written.
	grew := 0
	for i := 1; i < len(written); i++ {
		if written[i] < written[i-1] {
			t.Fatalf("written %v: shrinks", written)
		}
		if written[i] > written[i-1] {
			grew++
		}
	}
	if want := nodes/nodesPerHold + pods/podsPerHold; grew < want {
		t.Errorf("the document grew after %d parts (written %v), want at least %d: not streamed", grew, written, want)
	}
	if written[0] == 0 || written[0] > out.Len()/3 {
		t.Errorf("%d of %d bytes written by the first part: not streamed", written[0], out.Len())
	}
	var doc struct {
		Nodes map[string]json.RawMessage `json:"nodes"`
		Pods  map[string]struct {
			Node string `json:"node"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("the stream under events is not JSON: %v", err)
	}
	if len(doc.Nodes) < nodes {
		t.Errorf("%d nodes written, want at least %d", len(doc.Nodes), nodes)
	}
	if got := len(podKey.FindAllIndex(out.Bytes(), -1)); got != pods || len(doc.Pods) != pods {
		t.Errorf("%d pod keys written (%d distinct), want each of %d once", got, len(doc.Pods), pods)
	}
	if next < pods {
		t.Fatalf("%d of %d pods moved: the test moves pods in fewer parts than there are", next, pods)
	}
	for _, p := range held {
		if got := doc.Pods["ns/"+p.Name].Node; got != "n-0000" {
			t.Errorf("pod %s moved before its part was copied is shown on %q", p.Name, got)
			break
		}
	}
	checkInvariants(t, h)
}

// podKey is a member of the pods' object (a node's view lists its pods' keys too).
var podKey = regexp.MustCompile(`"ns/p-[0-9]+": \{`)

// TestWriteDump_StopsAtTheFirstWriteError: a client gone (a write fails) or a request
// cancelled ends the dump with that error, without reading the rest of the cache.
func TestWriteDump_StopsAtTheFirstWriteError(t *testing.T) {
	h, _ := populated(t, 2*nodesPerHold+10, 2*podsPerHold+100)
	parts := 0
	h.afterPart = func() { parts++ }
	if err := h.WriteDump(context.Background(), &progressWriter{failAfter: 1000}, DumpIndented); !errors.Is(err, errClosed) {
		t.Errorf("WriteDump to a closed client = %v, want %v", err, errClosed)
	}
	if parts > 1 {
		t.Errorf("%d parts read after the client went away", parts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	parts = 0
	if err := h.WriteDump(ctx, &progressWriter{}, DumpIndented); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteDump with a cancelled request = %v, want %v", err, context.Canceled)
	}
	if parts > 1 {
		t.Errorf("%d parts read for a cancelled request", parts)
	}
}
