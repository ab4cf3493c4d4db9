package debug

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestDump_IsTheSchemaOfWhatWriteDumpWrites: with every built-in store holding something,
// the document WriteDump writes decodes into Dump with no field left over, at any depth, and
// every part Dump names (but the extensions, absent without one) is written.
func TestDump_IsTheSchemaOfWhatWriteDumpWrites(t *testing.T) {
	config, err := stores.NewCacheHandler(stores.Config{SubClusterKey: "multicache.dev/shard", SubCluster: "a"})
	if err != nil {
		t.Fatal(err)
	}
	h := handler.New(config, logr.Discard())
	for _, add := range []error{
		h.Add(ts.MakeNode("n1", "8", "32Gi", "multicache.dev/shard", "a")),
		h.Add(ts.MakePod("ns", "p1", ts.OnNode("n1"), ts.Requests("1", "1Gi"), ts.InGroup("g"))),
		h.AssumePod(ts.MakePod("ns", "p2", ts.OnNode("n1"), ts.Requests("1", "1Gi"))),
		h.Add(ts.MakePodGroup("ns", "g", 2)),
		h.Add(ts.MakePDB("ns", "budget", 1, "app", "x")),
		h.Add(ts.MakeReservation("ns", "r", "n1", "1", "1Gi", "app", "y")),
		h.Add(ts.MakeMovement("m", v1alpha1.OwnerInfo{Type: v1alpha1.OwnerReplicaSet, Namespace: "ns", Name: "web"}, "n1", 1)),
	} {
		if add != nil {
			t.Fatal(add)
		}
	}
	var buf bytes.Buffer
	if err := h.WriteDump(context.Background(), &buf, handler.DumpCompact); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	var d Dump
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the document does not decode into debug.Dump: %v", err)
	}
	var written map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &written); err != nil {
		t.Fatal(err)
	}
	dump := reflect.TypeFor[Dump]()
	for i := range dump.NumField() {
		key := strings.Split(dump.Field(i).Tag.Get("json"), ",")[0]
		if _, ok := written[key]; !ok && key != "extensions" {
			t.Errorf("debug.Dump names %q, which WriteDump does not write", key)
		}
	}
	if len(d.Nodes) != 1 || len(d.Pods) != 2 || len(d.PodGroups) != 1 || len(d.PDBs) != 1 || len(d.Reservations) != 1 || len(d.Movements) != 1 {
		t.Errorf("a part is empty: %s", buf.String())
	}
}
