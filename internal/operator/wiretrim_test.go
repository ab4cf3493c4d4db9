package operator

import (
	"context"
	"math/rand"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	genericfuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"

	"github.com/seed0f91f25e/multicache/internal/wiretrim"
	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// TestWireTrim_TheTransformsKeepTheSameFromTrimmedResponses is the guard of trimmedKinds:
// random objects of each kind, encoded as the API server sends them (a list, a watch
// stream), decoded by client-go with and without the trim and transformed as the cache
// transforms them, must come out equal. It fails when a transform starts keeping a field
// the trim drops.
func TestWireTrim_TheTransformsKeepTheSameFromTrimmedResponses(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	f := fuzzer.FuzzerFor(genericfuzzer.Funcs, rand.NewSource(seed), scheme.Codecs).NilChance(.3).NumElements(1, 2)
	for _, k := range trimmedKinds(false) {
		t.Run(k.Kind, func(t *testing.T) {
			gvk := schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
			objs := make([]runtime.Object, 0, 60)
			for i := range cap(objs) {
				objs = append(objs, fuzzed(t, f, gvk, i%2 == 0))
			}
			list := newObject(t, gvk.GroupVersion().WithKind(k.Kind+"List"))
			if err := meta.SetList(list, objs); err != nil {
				t.Fatal(err)
			}
			listBytes, err := wiretrimtest.Object(list)
			if err != nil {
				t.Fatal(err)
			}
			events := []wiretrimtest.Event{}
			for i, o := range objs {
				events = append(events, wiretrimtest.Event{Type: []watch.EventType{watch.Added, watch.Modified, watch.Deleted}[i%3], Object: o})
			}
			bookmark := newObject(t, gvk).(client.Object)
			bookmark.SetResourceVersion("42")
			bookmark.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			events = append(events, wiretrimtest.Event{Type: watch.Bookmark, Object: bookmark})
			watchBytes, err := wiretrimtest.Watch(events...)
			if err != nil {
				t.Fatal(err)
			}
			responder := wiretrimtest.Responder{List: listBytes, Watch: watchBytes}
			whole := listAndWatch(t, k, responder)
			trimmed := listAndWatch(t, k, wiretrim.Wrapper(trimmedKinds(false)...)(responder))
			if len(whole) != len(objs)*2+1 || len(trimmed) != len(whole) {
				t.Fatalf("decoded %d objects whole and %d trimmed, want %d", len(whole), len(trimmed), len(objs)*2+1)
			}
			for _, o := range trimmed {
				if mf := o.(client.Object).GetManagedFields(); mf != nil {
					t.Fatalf("the trim kept managedFields: %v", mf)
				}
				if spec := field(reflect.ValueOf(o).Elem(), "Spec", "Template", "Spec"); spec.IsValid() && !spec.IsZero() {
					t.Fatalf("the trim kept the template's spec: %v", spec)
				}
			}
			transform := cacheTransform(t, gvk)
			for i := range whole {
				w, err := transform(whole[i])
				if err != nil {
					t.Fatal(err)
				}
				tr, err := transform(trimmed[i])
				if err != nil {
					t.Fatal(err)
				}
				if !apiequality.Semantic.DeepEqual(w, tr) {
					t.Fatalf("object %d differs once transformed (-whole +trimmed):\n%s", i, diff.Diff(w, tr))
				}
			}
		})
	}
}

// fuzzed is a random object of gvk, with managedFields when withManagedFields.
func fuzzed(t *testing.T, f *randfill.Filler, gvk schema.GroupVersionKind, withManagedFields bool) runtime.Object {
	obj := newObject(t, gvk)
	f.Fill(obj)
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	if o := obj.(client.Object); withManagedFields && len(o.GetManagedFields()) == 0 {
		var e metav1.ManagedFieldsEntry
		f.Fill(&e)
		o.SetManagedFields([]metav1.ManagedFieldsEntry{e})
	}
	return obj
}

func newObject(t testing.TB, gvk schema.GroupVersionKind) runtime.Object {
	t.Helper()
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// listAndWatch lists and watches k through rt, as the cache's informers do (protobuf, the
// controller-runtime client's REST clients), and returns the objects listed and watched.
func listAndWatch(t *testing.T, k wiretrim.Kind, rt http.RoundTripper) []runtime.Object {
	t.Helper()
	gv := schema.GroupVersion{Group: k.Group, Version: k.Version}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.AddSpecific(gv.WithKind(k.Kind), gv.WithResource(k.Resource), gv.WithResource(k.Resource), meta.RESTScopeRoot)
	c, err := client.NewWithWatch(&rest.Config{Host: "http://wiretrim.invalid"},
		client.Options{HTTPClient: &http.Client{Transport: rt}, Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	list := newObject(t, gv.WithKind(k.Kind+"List")).(client.ObjectList)
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(context.Background(), list)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for e := range w.ResultChan() {
		if e.Type == watch.Error {
			t.Fatalf("watch error: %v", e.Object)
		}
		objs = append(objs, e.Object)
	}
	return objs
}

// cacheTransform is the transform the manager's cache applies to objects of gvk.
func cacheTransform(t testing.TB, gvk schema.GroupVersionKind) toolscache.TransformFunc {
	return cacheTransformOf(t, Options{}, gvk)
}

// cacheTransformOf is the transform of objects of gvk in the cache that o configures.
func cacheTransformOf(t testing.TB, o Options, gvk schema.GroupVersionKind) toolscache.TransformFunc {
	opts := cacheOptions(o)
	want := reflect.TypeOf(newObject(t, gvk))
	for obj, by := range opts.ByObject {
		if reflect.TypeOf(obj) == want && by.Transform != nil {
			return by.Transform
		}
	}
	return opts.DefaultTransform
}

// field is the field of v at path, the zero Value when there is none.
func field(v reflect.Value, path ...string) reflect.Value {
	for _, name := range path {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return v
		}
	}
	return v
}

// A configuration client-go cannot build a transport from fails the cache's client with
// client-go's reason (the file it could not read).
func TestWireTrim_TheCacheClientFailsOnABadTLSConfig(t *testing.T) {
	_, err := cacheHTTPClient(&rest.Config{Host: "https://example.invalid", TLSClientConfig: rest.TLSClientConfig{CAFile: "/nonexistent/ca.crt"}}, false)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.crt") {
		t.Fatalf("err = %v, want one naming the CA file", err)
	}
}
