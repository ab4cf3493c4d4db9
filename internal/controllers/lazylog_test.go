package controllers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestLazyLogConstructor_WritesTheLinesItWasGiven logs through the lazy sink what
// controller-runtime's own constructor would: every value, the name, the level, and the
// caller of the line (not the sink's frame).
func TestLazyLogConstructor_WritesTheLinesItWasGiven(t *testing.T) {
	var buf bytes.Buffer
	base := zap.New(zap.WriteTo(&buf), zap.UseDevMode(false), zap.RawZapOpts(uberzap.AddCaller())).WithName("multicache")
	req := &reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "p"}}
	log := lazyLogConstructor(base, "pod-feed", podGVK)(req).WithValues("reconcileID", "r-1").WithName("sub")
	log.V(1).Info("not written at V(1)")
	log.Info("applied", "op", "add")
	log.Error(fmt.Errorf("boom"), "failed", "attempt", 2)
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []map[string]any{
		{"msg": "applied", "op": "add", "level": "info"},
		{"msg": "failed", "attempt": float64(2), "error": "boom", "level": "error"},
	} {
		var got map[string]any
		if err := json.Unmarshal(lines[i], &got); err != nil {
			t.Fatal(err)
		}
		want["controller"], want["namespace"], want["name"], want["reconcileID"] = "pod-feed", "ns", "p", "r-1"
		want["controllerGroup"], want["controllerKind"] = "", "Pod"
		want["logger"] = "multicache.sub"
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, lines[i])
			}
		}
		if c, _ := got["caller"].(string); c == "" || !bytes.Contains([]byte(c), []byte("lazylog_test.go")) {
			t.Errorf("line %d: caller %q, want this test file", i, c)
		}
	}
	if l := lazyLogConstructor(logr.Discard(), "x", podGVK)(req); l.Enabled() {
		t.Error("a discarding base logger became enabled")
	}
}

// BenchmarkLogConstructor compares the logger a feed reconcile builds (the object's values,
// then controller-runtime's reconcileID) with controller-runtime's default constructor and
// with the lazy one, over a JSON zap logger at info level. Run:
// go test -run '^$' -bench BenchmarkLogConstructor -benchmem ./controllers
func BenchmarkLogConstructor(b *testing.B) {
	base := zap.New(zap.WriteTo(io.Discard), zap.UseDevMode(false))
	req := &reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "p"}}
	controllerRuntimes := controllerRuntimesConstructor(base, "pod-feed", podGVK)
	for _, c := range []struct {
		name string
		ctor func(*reconcile.Request) logr.Logger
	}{{"controller-runtime", controllerRuntimes}, {"lazy", lazyLogConstructor(base, "pod-feed", podGVK)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = c.ctor(req).WithValues("reconcileID", uuid.NewUUID())
			}
		})
	}
}

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// controllerRuntimesConstructor is controller-runtime's default LogConstructor, as its
// builder.go (v0.25.2) builds it for a controller of gvk.
func controllerRuntimesConstructor(base logr.Logger, controller string, gvk schema.GroupVersionKind) func(*reconcile.Request) logr.Logger {
	log := base.WithValues("controller", controller, "controllerGroup", gvk.Group, "controllerKind", gvk.Kind)
	return func(req *reconcile.Request) logr.Logger {
		return log.WithValues(gvk.Kind, klog.KRef(req.Namespace, req.Name), "namespace", req.Namespace, "name", req.Name)
	}
}

// TestLazyLogConstructor_LogsTheFieldsOfControllerRuntimesOwn writes one line through each
// constructor and compares every field but the time and the caller.
func TestLazyLogConstructor_LogsTheFieldsOfControllerRuntimesOwn(t *testing.T) {
	req := &reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web-1"}}
	gvk := schema.GroupVersionKind{Group: "cache.multicache.dev", Version: "v1alpha1", Kind: "Reservation"}
	line := func(ctor func(logr.Logger) func(*reconcile.Request) logr.Logger) map[string]any {
		var buf bytes.Buffer
		ctor(zap.New(zap.WriteTo(&buf), zap.UseDevMode(false)))(req).Info("applied")
		var got map[string]any
		if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &got); err != nil {
			t.Fatalf("%v: %s", err, buf.String())
		}
		delete(got, "ts")
		return got
	}
	want := line(func(b logr.Logger) func(*reconcile.Request) logr.Logger {
		return controllerRuntimesConstructor(b, "rsv-feed", gvk)
	})
	got := line(func(b logr.Logger) func(*reconcile.Request) logr.Logger {
		return lazyLogConstructor(b, "rsv-feed", gvk)
	})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lazy constructor's line:\n %v\ncontroller-runtime's:\n %v", got, want)
	}
	if _, ok := got["Reservation"]; !ok {
		t.Errorf("no object reference under the kind: %v", got)
	}
}
