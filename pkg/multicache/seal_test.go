package multicache

import (
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/operator"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store/storetest"
)

// TestSiblings_GetAReaderAndAnAssumerThatReachNoLockNorWrite: what a sibling is built with
// wraps the handler. No type assertion turns the Reader into something that locks or
// writes (nor into the Assumer), the Assumer has the scheduler's methods only (pods, claims), and
// neither has an exported field to reach the handler by.
func TestSiblings_GetAReaderAndAnAssumerThatReachNoLockNorWrite(t *testing.T) {
	h := newHandler(t)
	var deps SiblingDeps
	f := siblingFactory(func(d SiblingDeps) (Sibling, error) { deps = d; return nil, nil })
	if s, err := f(operator.SiblingDeps{Cache: h}); s != nil || err != nil {
		t.Fatalf("a factory returning nothing: %v, %v", s, err)
	}
	checkSealed(t, deps.Reader, reflect.TypeFor[Reader]())
	checkSealed(t, deps.Assumer, reflect.TypeFor[Assumer]())
	if _, ok := deps.Reader.(Assumer); ok {
		t.Error("the Reader is also an Assumer: a sibling given only the Reader could write")
	}
	snap := deps.Reader.NewSnapshot(SnapshotOptions{})
	checkNoExportedFields(t, snap)
	checkNoWrites(t, reflect.TypeOf(snap))
}

// TestSiblings_TheAssumerGoesThroughTheStateMachine: the one write path refuses what the
// state machine refuses and changes nothing then; what it accepts the Reader sees.
func TestSiblings_TheAssumerGoesThroughTheStateMachine(t *testing.T) {
	h := newHandler(t)
	r, a := readerOf(h), assumer{h}
	pod := ts.MakePod("ns", "p", ts.OnNode("n1"))
	if err := a.ForgetPod(pod); !errors.Is(err, store.ErrPodUnknown) && !errors.Is(err, store.ErrPodNotAssumed) {
		t.Errorf("forgetting a pod never assumed: %v, want the state machine's refusal", err)
	}
	if err := a.AssumePod(ts.MakePod("ns", "unbound")); !errors.Is(err, store.ErrInvalidObject) || Retryable(err) {
		t.Errorf("assuming a pod without a node: %v, want ErrInvalidObject, not retryable", err)
	}
	if _, ok := r.PodState(store.PodKey(pod)); ok {
		t.Error("a refused call changed the cache")
	}
	if err := a.AssumePod(pod); err != nil {
		t.Fatal(err)
	}
	if err := a.AssumePod(pod); !errors.Is(err, store.ErrPodAlreadyAssumed) || !Retryable(err) {
		t.Errorf("assuming twice: %v, want ErrPodAlreadyAssumed, retryable", err)
	}
	st, ok := r.PodState(store.PodKey(pod))
	if assumed, err := a.IsAssumedPod(pod); !ok || st.State != store.PodAssumed || !assumed || err != nil {
		t.Errorf("after the assumption: state %v %v, IsAssumedPod %v %v", st.State, ok, assumed, err)
	}
	if err := a.FinishBinding(pod); err != nil {
		t.Error(err)
	}
	if err := a.ForgetPod(pod); err != nil {
		t.Error(err)
	}
	if _, ok := r.PodState(store.PodKey(pod)); ok {
		t.Error("a forgotten pod is still in the cache")
	}
}

// TestStores_GetAHandleWithoutTheLockOrTheWiring: a store registered with WithStore, and
// a store's unit test (storetest), get a store.Handle with its methods only: no type
// assertion reaches the CacheHandler's lock, its Set* wiring or PodOp, and the pod reader
// does not write.
func TestStores_GetAHandleWithoutTheLockOrTheWiring(t *testing.T) {
	var got store.Handle
	reg, err := handler.BuiltIn().With(handler.Registration{Name: "probe", New: storeFactory(func(h store.Handle) (store.Store, error) {
		got = h
		return nopStore{"probe"}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	config, err := stores.NewCacheHandler(stores.Config{KnownStores: reg.Names(), EnabledStores: reg.Names(),
		PodReader: fake.NewClientBuilder().Build()}) // the manager's client reads and writes
	if err != nil {
		t.Fatal(err)
	}
	if _, err := handler.NewFromRegistry(config, reg, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	checkSealed(t, got, reflect.TypeFor[store.Handle]())
	if _, ok := got.PodReader().(client.Writer); ok || got.PodReader() == nil {
		t.Errorf("the handle's PodReader is a %T: it must read and not write", got.PodReader())
	}
	checkSealed(t, storetest.NewHandle(), reflect.TypeFor[store.Handle]())
	for name, v := range map[string]any{"registered store's": got, "storetest's": storetest.NewHandle()} {
		if _, ok := v.(*stores.CacheHandler); ok {
			t.Errorf("the %s handle is the CacheHandler itself", name)
		}
		if _, ok := v.(interface{ Mutex() *sync.RWMutex }); ok {
			t.Errorf("the %s handle hands out the lock", name)
		}
		if _, ok := v.(interface {
			PodOp(*corev1.Pod, bool, ...stores.Name)
		}); ok {
			t.Errorf("the %s handle dispatches events", name)
		}
	}
}

func newHandler(t *testing.T) *handler.Handler {
	t.Helper()
	config, err := stores.NewCacheHandler(stores.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return handler.New(config, logr.Discard())
}

// checkSealed fails unless v's methods are exactly those of the interface api, v has no
// exported field, and v is not the handler or anything with a lock.
func checkSealed(t *testing.T, v any, api reflect.Type) {
	t.Helper()
	if v == nil {
		t.Fatalf("no %s handed out", api)
	}
	typ := reflect.TypeOf(v)
	want := methodNames(api)
	types := []reflect.Type{typ}
	if typ.Kind() != reflect.Pointer {
		types = append(types, reflect.PointerTo(typ))
	}
	for _, ty := range types {
		if got := methodNames(ty); !slices.Equal(got, want) {
			t.Errorf("the %s handed out is a %s with methods %v, want %v only", api, ty, got, want)
		}
	}
	if _, ok := v.(*handler.Handler); ok {
		t.Errorf("the %s handed out is the handler", api)
	}
	for name, iface := range map[string]reflect.Type{
		"sync.Locker": reflect.TypeFor[sync.Locker](),
		"RLock":       reflect.TypeFor[interface{ RLock() }](),
		"Mutex":       reflect.TypeFor[interface{ Mutex() *sync.RWMutex }](),
		"Config":      reflect.TypeFor[interface{ Config() *stores.CacheHandler }](),
		"AddPod":      reflect.TypeFor[interface{ AddPod(*corev1.Pod) error }](),
		"UpdatePod":   reflect.TypeFor[interface{ UpdatePod(_, _ *corev1.Pod) error }](),
		"DeletePod":   reflect.TypeFor[interface{ DeletePod(*corev1.Pod) error }](),
		"ReadStore": reflect.TypeFor[interface {
			ReadStore(stores.Name, func(store.Store)) bool
		}](),
		"the event API": reflect.TypeFor[handler.ClusterEventsHandler](),
		"ExpireAssumed": reflect.TypeFor[interface{ ExpireAssumedPods() int }](),
		"SetNodeHandler": reflect.TypeFor[interface {
			SetNodeHandler(func(string) (*store.NodeInfo, bool))
		}](),
	} {
		if slices.ContainsFunc(types, func(ty reflect.Type) bool { return ty.Implements(iface) }) {
			t.Errorf("the %s handed out implements %s", api, name)
		}
	}
	checkNoExportedFields(t, v)
	checkNoWrites(t, typ)
}

func checkNoExportedFields(t *testing.T, v any) {
	t.Helper()
	typ := reflect.TypeOf(v)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return
	}
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			t.Errorf("%s has the exported field %s (%s)", typ, f.Name, f.Type)
		}
	}
}

// checkNoWrites fails on a method whose name says it changes the cache or locks it.
func checkNoWrites(t *testing.T, typ reflect.Type) {
	t.Helper()
	if typ.Kind() != reflect.Pointer {
		typ = reflect.PointerTo(typ)
	}
	for _, m := range methodNames(typ) {
		for _, prefix := range []string{"Add", "Update", "Delete", "Set", "Sync", "Lock", "RLock", "Unlock", "Expire", "Reap", "Mutex", "Config", "ReadStore"} {
			if m == prefix || len(m) > len(prefix) && m[:len(prefix)] == prefix && m != "UpdateSnapshot" {
				t.Errorf("%s has the method %s", typ, m)
			}
		}
	}
}

func methodNames(typ reflect.Type) []string {
	out := make([]string, typ.NumMethod())
	for i := range out {
		out[i] = typ.Method(i).Name
	}
	slices.Sort(out)
	return out
}
