package main

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/seed0f91f25e/multicache/internal/debug"
	"github.com/seed0f91f25e/multicache/internal/stores/devicestore"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// TestShowNodes_DevicesFreeOverTotal: the nodes table's DEVICES FREE/TOTAL is free/total
// of the node's devices in the devices store's part of the dump; "-" for a node no pool
// reaches.
func TestShowNodes_DevicesFreeOverTotal(t *testing.T) {
	d := &debug.Dump{
		Nodes: map[string]nodestore.NodeDump{"gpu-node": {}, "cpu-node": {}},
		Devices: devicestore.Dump{Nodes: map[string]devicestore.NodeDump{
			"gpu-node": {Devices: store.NodeDevices{DeviceCounts: store.DeviceCounts{Total: 8, Allocated: 3, Free: 5}}},
		}},
	}
	var out bytes.Buffer
	if err := showNodes(&out, d); err != nil {
		t.Fatal(err)
	}
	// NODE, 6 resource cells, PODS, RESERVATIONS, DEVICES.
	for node, want := range map[string]string{"gpu-node": "5/8", "cpu-node": "-"} {
		if got := columns(t, out.String(), node)[9]; got != want {
			t.Errorf("%s: DEVICES %s, want %s:\n%s", node, got, want, out.String())
		}
	}
}

// TestShowNode_DevicesByClassAndPool: `node NAME` lists the node's devices per DeviceClass
// and per pool, flags an incomplete pool, and says plainly when the node has none.
func TestShowNode_DevicesByClassAndPool(t *testing.T) {
	v := &debug.NodeView{Name: "gpu-node", Devices: &store.NodeDevices{
		DeviceCounts: store.DeviceCounts{Total: 6, Allocated: 2, Free: 4},
		ByClass: map[string]store.DeviceCounts{
			"gpus": {Total: 4, Allocated: 2, Free: 2},
			"nics": {Total: 2, Free: 2},
		},
		ByPool: map[string]store.PoolDevices{
			"gpu.example.com/gpu-node": {DeviceCounts: store.DeviceCounts{Total: 4, Allocated: 2, Free: 2}, Generation: 2},
			"net.example.com/fabric":   {DeviceCounts: store.DeviceCounts{Total: 2, Free: 2}, Generation: 1, Shared: 2},
			"fpga.example.com/half":    {Generation: 3, Incomplete: true},
		},
	}}
	var out bytes.Buffer
	if err := showNode(&out, v); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "Devices (6, 2 allocated, 4 free)") {
		t.Errorf("no device totals:\n%s", s)
	}
	for key, want := range map[string][]string{
		"gpus":                     {"gpus", "4", "2", "2"},
		"nics":                     {"nics", "2", "0", "2"},
		"gpu.example.com/gpu-node": {"gpu.example.com/gpu-node", "2", "4", "2", "2", "0", "-"},
		"net.example.com/fabric":   {"net.example.com/fabric", "1", "2", "0", "2", "2", "-"},
		"fpga.example.com/half":    {"fpga.example.com/half", "3", "0", "0", "0", "0", "incomplete"},
	} {
		if got := columns(t, s, key); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %s: %v, want %v:\n%s", key, got, want, s)
		}
	}

	out.Reset()
	if err := showNode(&out, &debug.NodeView{Name: "cpu-node"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Devices: none") {
		t.Errorf("a node without devices:\n%s", out.String())
	}
}

// TestShowNode_AnExtendedResourceDRAServesIsShownApartFromAllocatable: a GPU request DRA
// devices serve on a node that lists no GPU is in its own DRA-REQUESTED column, not
// requested against allocatable (which would show it over-committed).
func TestShowNode_AnExtendedResourceDRAServesIsShownApartFromAllocatable(t *testing.T) {
	gpu := corev1.ResourceName("example.com/gpu")
	v := &debug.NodeView{Name: "gpu-node", NodeDump: nodestore.NodeDump{
		Allocatable:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		DRARequested: corev1.ResourceList{gpu: resource.MustParse("2")},
	}}
	var out bytes.Buffer
	if err := showNode(&out, v); err != nil {
		t.Fatal(err)
	}
	// RESOURCE, ALLOCATABLE, REQUESTED, FREE, RESERVED, BEST-EFFORT ALLOC, BEST-EFFORT REQ, DRA-REQUESTED.
	if got, want := columns(t, out.String(), string(gpu)), []string{string(gpu), "0", "0", "0", "0", "0", "0", "2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("row %s: %v, want %v:\n%s", gpu, got, want, out.String())
	}
}
