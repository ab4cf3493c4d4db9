package nodepods

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// env is the real kube-apiserver and etcd shared by the tests of this package.
var env *ts.Env

func TestMain(m *testing.M) { ts.RunMain(m, &env) }

// shardKey labels the nodes of the tests' shards; each test has its own value.
const shardKey = "nodepods.multicache.dev/shard"

var namespaces atomic.Int64

// newNamespace creates a namespace of its own for a test.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("np-%d-%s", namespaces.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-")))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// shard is a started Set over the nodes labelled shardKey=name, with what its client's
// watches may be held at (gates).
type shard struct {
	name  string
	set   *Set
	gates *gates
	start func()
}

// newShard builds the Set of the nodes labelled shardKey=name, not started.
func newShard(t *testing.T, name string) *shard {
	t.Helper()
	g := &gates{held: map[string]chan struct{}{}}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return gatedTransport{rt: rt, gates: g} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes := toolscache.NewSharedIndexInformer(toolscache.NewFilteredListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", "",
		func(o *metav1.ListOptions) { o.LabelSelector = shardKey + "=" + name }), &corev1.Node{}, 0, toolscache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		g.releaseAll()
		wg.Wait()
	})
	wg.Add(1)
	go func() { defer wg.Done(); nodes.RunWithContext(ctx) }()
	s := &shard{name: name, set: NewSet(cs, nodes, nil, nil, logr.Discard()), gates: g}
	s.start = func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.set.Start(ctx); err != nil {
				t.Errorf("Set.Start: %v", err)
			}
		}()
	}
	return s
}

// startSet starts the Set (once).
func (s *shard) startSet() { s.start() }

func keyOf(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// startedShard is newShard started and synced.
func startedShard(t *testing.T, name string) *shard {
	t.Helper()
	s := newShard(t, name)
	s.startSet()
	eventually(t, "the Set synced", func() (bool, string) { return s.set.HasSynced(), "not synced" })
	return s
}

// gates hold the responses of the pod lists and watches of some nodes (field selector
// spec.nodeName=<node>; "" for the unbound pods): a held node's watch is a slow watch,
// whose events reach the informer when released.
type gates struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

func (g *gates) hold(node string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.held[node]; !ok {
		g.held[node] = make(chan struct{})
	}
}

func (g *gates) release(node string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, ok := g.held[node]; ok {
		close(ch)
		delete(g.held, node)
	}
}

func (g *gates) releaseAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for node, ch := range g.held {
		close(ch)
		delete(g.held, node)
	}
}

// wait returns once node is not held, or ctx is done.
func (g *gates) wait(ctx context.Context, node string) {
	g.mu.Lock()
	ch, ok := g.held[node]
	g.mu.Unlock()
	if !ok {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// gatedTransport holds what the API server sends for a held node's pods: each read of the
// response body returns once the node is released.
type gatedTransport struct {
	rt    http.RoundTripper
	gates *gates
}

func (gt gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := gt.rt.RoundTrip(req)
	selector := req.URL.Query().Get("fieldSelector")
	node, ok := strings.CutPrefix(selector, "spec.nodeName=")
	if err != nil || !ok || !strings.HasSuffix(req.URL.Path, "/pods") {
		return resp, err
	}
	resp.Body = &gatedBody{ReadCloser: resp.Body, ctx: req.Context(), gates: gt.gates, node: node}
	return resp, nil
}

type gatedBody struct {
	io.ReadCloser
	ctx   context.Context
	gates *gates
	node  string
}

func (b *gatedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.gates.wait(b.ctx, b.node)
	return n, err
}

// recorder is an event handler that records what it is handed.
type recorder struct {
	mu      sync.Mutex
	adds    []event
	updates []event
	deletes []event
}

type event struct {
	key     string
	node    string
	initial bool
}

func eventOf(obj any, initial bool) event {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return event{key: fmt.Sprintf("not a pod: %T", obj)}
	}
	return event{key: p.Namespace + "/" + p.Name, node: p.Spec.NodeName, initial: initial}
}

func (r *recorder) OnAdd(obj any, initial bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adds = append(r.adds, eventOf(obj, initial))
}

func (r *recorder) OnUpdate(_, newObj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, eventOf(newObj, false))
}

func (r *recorder) OnDelete(obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deletes = append(r.deletes, eventOf(obj, false))
}

// added returns the keys added (sorted, repeats kept) in namespace ns.
func (r *recorder) added(ns string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return keysIn(r.adds, ns)
}

func (r *recorder) deleted(ns string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return keysIn(r.deletes, ns)
}

func (r *recorder) addEvents() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.adds)
}

func keysIn(events []event, ns string) []string {
	var out []string
	for _, e := range events {
		if strings.HasPrefix(e.key, ns+"/") {
			out = append(out, e.key)
		}
	}
	sort.Strings(out)
	return out
}

// keys returns ns/name of each name, sorted.
func keys(ns string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = ns + "/" + n
	}
	sort.Strings(out)
	return out
}

// heldIn returns the keys of the pods the Set lists in namespace ns, sorted.
func heldIn(s *Set, ns string) []string {
	var out []string
	for _, p := range s.List() {
		if p.Namespace == ns {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// eventually polls cond with a generous deadline (the API server is shared by a busy machine).
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	ts.Eventually(t, what, time.Minute, 20*time.Millisecond, cond)
}

// equalKeys is a condition: got() equals want.
func equalKeys(got func() []string, want []string) func() (bool, string) {
	return func() (bool, string) {
		g := got()
		return slices.Equal(g, want), fmt.Sprintf("got %v, want %v", g, want)
	}
}

// makeNode creates a node, in the shard named when shard is not "".
func makeNode(t *testing.T, name, shard string) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if shard != "" {
		node.Labels = map[string]string{shardKey: shard}
	}
	if err := env.Client.Create(context.Background(), node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })
}

// label moves a node to shard ("": out of every shard).
func label(t *testing.T, node, shard string) {
	t.Helper()
	n := &corev1.Node{}
	if err := env.Client.Get(context.Background(), keyOf("", node), n); err != nil {
		t.Fatal(err)
	}
	if shard == "" {
		delete(n.Labels, shardKey)
	} else {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[shardKey] = shard
	}
	if err := env.Client.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// makePods creates pods named name on node ("" unbound) in ns.
func makePods(t *testing.T, ns, node string, names ...string) {
	t.Helper()
	for _, name := range names {
		pod := ts.MakePod(ns, name, ts.OnNode(node), ts.Requests("100m", "64Mi"))
		pod.UID = ""
		if err := env.Client.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
	}
}

// waitCached waits until a list of ns's pods served from the API server's watch cache
// (resource version 0, what a reflector's first list asks for) holds n pods.
func waitCached(t *testing.T, ns string, n int) {
	t.Helper()
	eventually(t, "the watch cache holds the namespace's pods", func() (bool, string) {
		var pods corev1.PodList
		err := env.Client.List(context.Background(), &pods, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}})
		return err == nil && len(pods.Items) == n, fmt.Sprintf("%d pods listed (%v)", len(pods.Items), err)
	})
}

// bind binds a pod to a node through the binding subresource, as a scheduler does.
func bind(t *testing.T, ns, pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods(ns).Bind(context.Background(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
