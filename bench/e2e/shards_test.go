package e2e

import (
	"bytes"
	"runtime/pprof"
	"testing"
)

func TestMemSplit_ParsesTheMemStatsOfAHeapProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	var m MemSplit
	if err := m.parseMemStats(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if m.HeapInuse <= 0 || m.Stacks <= 0 || m.Runtime <= 0 || m.NextGC <= 0 || m.HeapRetained < 0 {
		t.Errorf("%+v: want positive heap in use, stacks, runtime metadata and heap goal", m)
	}
	if err := m.parseMemStats([]byte("heap profile: 0: 0 [0: 0] @ heap/1048576\n")); err == nil {
		t.Error("a profile without MemStats parsed")
	}
}
