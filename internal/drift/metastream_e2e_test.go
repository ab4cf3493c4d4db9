package drift

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// contentTypes records the media type of every response, by path.
type contentTypes struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func (c *contentTypes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		if c.seen[req.URL.Path] == nil {
			c.seen[req.URL.Path] = map[string]bool{}
		}
		c.seen[req.URL.Path][resp.Header.Get("Content-Type")] = true
		c.mu.Unlock()
	}
	return resp, err
}

// TestMetadataStream_ReadsWhatTheAPIServerServes lists, through a real API server in pages
// of 2, pods of two namespaces one the prefix of the other, nodes (cluster-scoped) and
// PodGroups (a custom resource), and checks that the stream gives the keys and resource
// versions of exactly the objects a whole list gives, and that the built-in kinds arrive
// in protobuf (read field by field, not through the JSON fallback).
func TestMetadataStream_ReadsWhatTheAPIServerServes(t *testing.T) {
	t.Parallel() // its own control plane: the wait for it overlaps the other e2e test's
	env := ts.StartForTest(t, ts.StartOptions{})
	ctx := context.Background()
	for _, ns := range []string{"e2e-a", "e2e-a-b"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			pod := ts.MakePod(ns, fmt.Sprintf("p%d", i), ts.OnNode("n0"), ts.Requests("1m", "1Mi"))
			pod.UID = ""
			if err := env.Client.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
		}
		if err := env.Client.Create(ctx, ts.MakePodGroup(ns, "g", 1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		node := ts.MakeNode(fmt.Sprintf("n%d", i), "8", "32Gi")
		node.UID = ""
		if err := env.Client.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	hc, mapper := clientAndMapper(t, env.Config)
	recorded := &contentTypes{rt: hc.Transport, seen: map[string]map[string]bool{}}
	stream, err := NewMetadataStream(env.Config, &http.Client{Transport: recorded}, env.Scheme, mapper,
		APISource{Reader: env.Client, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []stores.Kind{stores.KindPod, stores.KindNode, stores.KindPodGroup} {
		l := listingOf(t, kind)
		got := map[types.NamespacedName]string{}
		if err := stream.eachVersion(ctx, l, func(key types.NamespacedName, version []byte) error {
			got[key] = string(version)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		list := l.List()
		if err := env.Client.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		want := map[types.NamespacedName]string{}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			want[types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}] = obj.GetResourceVersion()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(want) < 2 || !maps.Equal(got, want) {
			t.Errorf("%s: the stream gives\n%v\nthe whole list\n%v", kind, got, want)
		}
	}
	for _, path := range []string{"/api/v1/pods", "/api/v1/nodes"} {
		if types := recorded.seen[path]; len(types) != 1 || !types[runtime.ContentTypeProtobuf] {
			t.Errorf("%s answered in %v, want protobuf only", path, types)
		}
	}
	t.Logf("media types: %v", recorded.seen)
}

func listingOf(t *testing.T, kind stores.Kind) Listing {
	t.Helper()
	for _, l := range Listings {
		if l.Kind == kind {
			return l
		}
	}
	t.Fatalf("no listing of %s", kind)
	return Listing{}
}

// clientAndMapper returns an HTTP client of cfg and a REST mapper that discovers through it.
func clientAndMapper(t *testing.T, cfg *rest.Config) (*http.Client, meta.RESTMapper) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return hc, mapper
}
