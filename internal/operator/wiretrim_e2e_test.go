package operator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/scheme"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

func wireTrimReplicaSet(ns, name string) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{v1alpha1.ReserveOnDeleteAnnotation: "true"}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}}}}},
	}
}

// The API server's real protobuf lists and watches of pods and ReplicaSets arrive through
// the cache's HTTP client without managedFields and template specs; its JSON, and its
// custom resources, arrive whole.
func TestWireTrim_TheCacheClientTrimsTheAPIServersProtobufOnly(t *testing.T) {
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakePod(ns, "p", ts.OnNode("n"), ts.Requests("1m", "1Mi"))))
	create(t, wireTrimReplicaSet(ns, "rs"))
	create(t, ts.MakePodGroup(ns, "g", 1))

	hc, err := cacheHTTPClient(env.Config, false)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := client.NewWithWatch(env.Config, client.Options{HTTPClient: hc, Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := trimmed.List(ctx(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].ManagedFields != nil || pods.Items[0].Spec.NodeName != "n" {
		t.Errorf("listed pods %+v, want one without managedFields", pods.Items)
	}
	rss := &appsv1.ReplicaSetList{}
	if err := trimmed.List(ctx(), rss, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(rss.Items) != 1 || rss.Items[0].ManagedFields != nil || len(rss.Items[0].Spec.Template.Spec.Containers) != 0 ||
		rss.Items[0].Spec.Template.Labels["app"] != "rs" || ptr.Deref(rss.Items[0].Spec.Replicas, -1) != 0 {
		t.Errorf("listed ReplicaSets %+v, want one without managedFields and template spec", rss.Items)
	}
	w, err := trimmed.Watch(ctx(), &corev1.PodList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e := <-w.ResultChan()
	if p, ok := e.Object.(*corev1.Pod); !ok || e.Type != watch.Added || p.ManagedFields != nil || p.Name != "p" {
		t.Errorf("watched %s %+v, want the pod without managedFields", e.Type, e.Object)
	}

	// JSON of the same kind and custom resources pass through.
	jsonCfg := rest.CopyConfig(env.Config)
	jsonCfg.ContentType = runtime.ContentTypeJSON
	asJSON, err := client.New(jsonCfg, client.Options{HTTPClient: hc, Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	if err := asJSON.List(ctx(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].ManagedFields == nil {
		t.Errorf("pods listed as JSON lost their managedFields: %+v", pods.Items)
	}
	groups := &v1alpha1.PodGroupList{}
	if err := trimmed.List(ctx(), groups, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(groups.Items) != 1 || groups.Items[0].ManagedFields == nil {
		t.Errorf("PodGroups lost their managedFields: %+v", groups.Items)
	}
}

// A cache with the trimming client holds, once transformed, what a cache without it holds.
func TestWireTrim_TheCacheHoldsWhatItHeldWithoutTheTrim(t *testing.T) {
	ns := newNamespace(t)
	for i := range 20 {
		p := withoutUID(ts.MakePod(ns, fmt.Sprintf("p-%02d", i), ts.OnNode(fmt.Sprintf("n-%d", i%3)), ts.Requests("10m", "16Mi"), ts.InGroup("g")))
		if i == 0 {
			create(t, ts.MakePodGroup(ns, "g", 1))
		}
		create(t, p)
		create(t, wireTrimReplicaSet(ns, fmt.Sprintf("rs-%02d", i)))
	}
	hc, err := cacheHTTPClient(env.Config, false)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	whole, trimmed := startCache(t, plain, ns), startCache(t, hc, ns)
	for _, list := range []func() client.ObjectList{
		func() client.ObjectList { return &corev1.PodList{} },
		func() client.ObjectList { return &appsv1.ReplicaSetList{} },
		func() client.ObjectList { return &v1alpha1.PodGroupList{} },
	} {
		w, tr := list(), list()
		if err := whole.List(ctx(), w); err != nil {
			t.Fatal(err)
		}
		if err := trimmed.List(ctx(), tr); err != nil {
			t.Fatal(err)
		}
		wm, trm := byName(t, w), byName(t, tr)
		if len(wm) != 20 && len(wm) != 1 {
			t.Errorf("the cache holds %d of %T", len(wm), w)
		}
		if !apiequality.Semantic.DeepEqual(wm, trm) {
			t.Errorf("%T differs (-whole +trimmed):\n%s", w, diff.Diff(wm, trm))
		}
	}
}

// startCache starts a cache of ns with the manager's cache options and hc, synced.
func startCache(t *testing.T, hc *http.Client, ns string) cache.Cache {
	t.Helper()
	return startCacheWith(t, Options{}, hc, ns)
}

// startCacheWith starts a cache of ns with the cache options o gives and hc, synced.
func startCacheWith(t *testing.T, o Options, hc *http.Client, ns string) cache.Cache {
	t.Helper()
	opts := cacheOptions(o)
	opts.HTTPClient, opts.Scheme = hc, scheme.New()
	opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	c, err := cache.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&corev1.Pod{}, &appsv1.ReplicaSet{}, &v1alpha1.PodGroup{}} {
		if _, err := c.GetInformer(ctx(), obj); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(runCtx) }()
	if !c.WaitForCacheSync(runCtx) {
		t.Fatal("the cache did not sync")
	}
	return c
}

// byName are the objects of list by name (a cache lists in no order).
func byName(t *testing.T, list client.ObjectList) map[string]runtime.Object {
	t.Helper()
	objs, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]runtime.Object{}
	for _, o := range objs {
		m[o.(client.Object).GetName()] = o
	}
	return m
}

// A list large enough that the API server compresses it (over 128 KiB) reaches the trim
// decompressed: Go's transport, under client-go's wrappers, negotiated gzip itself.
func TestWireTrim_ACompressedListIsTrimmedOnceDecompressed(t *testing.T) {
	ns := newNamespace(t)
	big := strings.Repeat("x", 1024)
	createPodsInParallel(t, ns, 200, func(i int) *corev1.Pod {
		p := ts.MakePod(ns, fmt.Sprintf("p-%03d", i), ts.OnNode("n"))
		p.Annotations = map[string]string{"big": big}
		return p
	})
	t.Cleanup(func() {
		_ = env.Client.DeleteAllOf(ctx(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0))
	})
	plain, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+"/api/v1/namespaces/"+ns+"/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", runtime.ContentTypeProtobuf)
	resp, err := plain.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", req.URL, resp.Status, body)
	}
	if !resp.Uncompressed {
		t.Fatalf("the API server did not compress a list of 200 pods (%d bytes): the test proves nothing", len(body))
	}

	hc, err := cacheHTTPClient(env.Config, false)
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := client.New(env.Config, client.Options{HTTPClient: hc, Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := trimmed.List(ctx(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 200 {
		t.Fatalf("listed %d pods, want 200", len(pods.Items))
	}
	for _, p := range pods.Items {
		if p.ManagedFields != nil || p.Annotations["big"] != big {
			t.Fatalf("pod %s: managedFields %v, annotation of %d bytes; want none and the whole annotation", p.Name, p.ManagedFields, len(p.Annotations["big"]))
		}
	}
}

// TestWireTrim_TheComparisonsMetadataListsArriveWithoutManagedFields: the reader of
// /debug/cache/compare lists metadata only; through the real API server its lists of pods
// (built in) and PodGroups (a custom resource) arrive without managedFields and with every
// name and resource version, and the manager's own reader still gets managedFields.
func TestWireTrim_TheComparisonsMetadataListsArriveWithoutManagedFields(t *testing.T) {
	ns := newNamespace(t)
	create(t, withoutUID(ts.MakePod(ns, "p", ts.OnNode("n"), ts.Requests("1m", "1Mi"))))
	create(t, ts.MakePodGroup(ns, "g", 1))
	s := scheme.New()
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, mustHTTPClient(t))
	if err != nil {
		t.Fatal(err)
	}
	trimmed, err := compareReader(env.Config, s, mapper, drift.Listings)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := client.New(env.Config, client.Options{Scheme: s, Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"PodList", "PodGroupList"} {
		gv := corev1.SchemeGroupVersion
		if kind == "PodGroupList" {
			gv = v1alpha1.GroupVersion
		}
		for _, c := range []struct {
			reader      client.Reader
			wantManaged bool
		}{{trimmed, false}, {whole, true}} {
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gv.WithKind(kind))
			if err := c.reader.List(ctx(), list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || list.Items[0].ResourceVersion == "" || list.Items[0].Name == "" ||
				(len(list.Items[0].ManagedFields) > 0) != c.wantManaged {
				t.Errorf("%s, managedFields wanted %v: %+v", kind, c.wantManaged, list.Items)
			}
		}
	}
}

func mustHTTPClient(t *testing.T) *http.Client {
	t.Helper()
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return hc
}
