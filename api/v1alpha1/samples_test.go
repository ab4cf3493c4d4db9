package v1alpha1_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSamples_AreAcceptedAndReadBackEqual creates every object of config/samples through
// the API and checks that the spec the API stored is the one the sample declares.
func TestSamples_AreAcceptedAndReadBackEqual(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(env.RepoRoot, "config", "samples", "cache_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	kinds := map[string]bool{}
	for _, file := range files {
		for _, sample := range decodeFile(t, file) {
			kinds[sample.GetObjectKind().GroupVersionKind().Kind] = true
			t.Run(filepath.Base(file), func(t *testing.T) {
				want := sample.(client.Object)
				if err := env.Client.Create(ctx, want.DeepCopyObject().(client.Object)); err != nil {
					t.Fatalf("sample rejected: %v", err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(ctx, want) })
				got := want.DeepCopyObject().(client.Object)
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
					t.Fatalf("reading back: %v", err)
				}
				if !equality.Semantic.DeepEqual(specOf(t, want), specOf(t, got)) {
					t.Errorf("spec read back differs:\nwant %v\ngot  %v", specOf(t, want), specOf(t, got))
				}
			})
		}
	}
	for _, kind := range []string{"NMNode", "CustomNodeResource", "PodGroup", "Movement", "Reservation"} {
		if !kinds[kind] {
			t.Errorf("config/samples has no %s", kind)
		}
	}
}

// decodeFile reads every YAML document of a file into a typed object.
func decodeFile(t *testing.T, file string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		obj, err := env.Scheme.New(u.GroupVersionKind())
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		obj.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
		out = append(out, obj)
	}
	return out
}

// specOf returns the spec of an object as a generic map.
func specOf(t *testing.T, obj runtime.Object) any {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if u["spec"] == nil {
		t.Fatalf("%T has no spec", obj)
	}
	return u["spec"]
}
