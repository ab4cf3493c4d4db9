package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/operator"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// env is the real kube-apiserver and etcd the operator of the view tests caches.
var env *ts.Env

func TestMain(m *testing.M) { ts.RunMain(m, &env) }

// TestViews_ShowWhatTheOperatorCaches runs the operator in-process against the real API
// server and reads it through the plugin (--debug-url, the path a port-forward ends in): a
// node with a bound pod and a reservation shows its allocatable, what is charged, what is
// free, its pod and reservation counts, its DRA devices (a pool of 4, one held by a claim:
// 3/4 free, and per DeviceClass in `node`); the reservation its phase and node; the
// comparison with the API is empty (exit 0).
func TestViews_ShowWhatTheOperatorCaches(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	opts := operator.DefaultOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress, opts.DebugBindAddress = "0", "0", addr
	opts.LowFreeThreshold = 0
	opts.SkipControllerNameValidation = true
	op, err := operator.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with %v", err)
		}
	}()

	node := ts.MakeNode("plugin-node", "4", "8Gi")
	node.UID = ""
	pod := ts.MakePod("default", "plugin-pod", ts.OnNode("plugin-node"), ts.Requests("1500m", "1Gi"))
	pod.UID = ""
	rsv := ts.MakeReservation("default", "plugin-rsv", "plugin-node", "500m", "1Gi", "app", "nobody")
	if err := env.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, rsv); err != nil {
		t.Fatal(err)
	}
	createDevices(ctx, t, "plugin-node")
	plugin := func(args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"--debug-url=http://" + addr}, args...), &out, &errOut)
		return code, out.String() + errOut.String()
	}
	// CPU: 4 allocatable, 1.5 (pod) + 0.5 (reservation) requested, 2 free; 1 pod, 1 reservation.
	want := map[string][]string{
		"nodes":        {"plugin-node", "4", "2", "1", "1", "3/4"},
		"reservations": {"default/plugin-rsv", "Reserved", "plugin-node", "500m"},
	}
	deadline := time.Now().Add(60 * time.Second)
	for cmd, fields := range want {
		for {
			code, out := plugin(cmd)
			if code == 0 && hasRow(out, fields) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("kubectl multicache %s: exit %d, no row with %v:\n%s", cmd, code, fields, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The class comes through its own feed: wait for it too.
	for {
		code, out := plugin("node", "plugin-node")
		if code == 0 && strings.Contains(out, "default/plugin-pod") &&
			hasRow(out, []string{"plugin-gpus", "4", "1", "3"}) && hasRow(out, []string{"plugin.example.com/plugin-node", "1", "4", "1", "3", "0", "-"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl multicache node plugin-node: exit %d, no pod default/plugin-pod or no devices (class plugin-gpus 4 total, 1 allocated, 3 free):\n%s", code, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, out := plugin("node", "no-such-node"); code == 0 {
		t.Errorf("kubectl multicache node no-such-node: exit 0:\n%s", out)
	}
	for {
		code, out := plugin("compare")
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl multicache compare: exit %d:\n%s", code, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The raw dump is printed indented, as a person reads it (the server writes programs
	// compact JSON), and it is the cache's document.
	code, out := plugin("dump")
	var doc map[string]any
	if code != 0 || !strings.HasPrefix(out, "{\n  \"") || json.Unmarshal([]byte(out), &doc) != nil || doc["nodes"] == nil {
		t.Errorf("kubectl multicache dump: exit %d, want indented JSON with the nodes:\n%.300s", code, out)
	}
}

// createDevices creates a DeviceClass, a pool of 4 devices on node and a claim allocated
// one of them.
func createDevices(ctx context.Context, t *testing.T, node string) {
	t.Helper()
	const driver = "plugin.example.com"
	slice := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"}, Spec: resourcev1.ResourceSliceSpec{
		Driver: driver, NodeName: ptr.To(node), Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
	}}
	for i := range 4 {
		slice.Spec.Devices = append(slice.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu%d", i)})
	}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plugin-gpu"}, Spec: resourcev1.ResourceClaimSpec{
		Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "plugin-gpus", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}},
	}}
	for _, o := range []client.Object{
		&resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "plugin-gpus"}, Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "plugin.example.com"`}}},
		}},
		slice, claim,
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: driver, Pool: node, Device: "gpu2"},
	}}}
	if err := env.Client.Status().Update(ctx, claim); err != nil {
		t.Fatalf("allocating the claim: %v", err)
	}
}

// hasRow reports whether a line of out starts with fields[0] and holds every other field as
// a column.
func hasRow(out string, fields []string) bool {
	for _, line := range strings.Split(out, "\n") {
		cols := strings.Fields(line)
		if len(cols) == 0 || cols[0] != fields[0] {
			continue
		}
		ok := true
		for _, f := range fields[1:] {
			found := false
			for _, c := range cols[1:] {
				if c == f {
					found = true
				}
			}
			ok = ok && found
		}
		if ok {
			return true
		}
	}
	return false
}
