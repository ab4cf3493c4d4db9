package operator

import (
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	genericfuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/seed0f91f25e/multicache/internal/wiretrim"
	"github.com/seed0f91f25e/multicache/internal/wiretrim/wiretrimtest"
)

// pathTree is podWirePaths as a tree: the field numbers dropped at one message and the
// sub-messages that hold more.
type pathTree struct {
	drop []protowire.Number
	into map[protowire.Number]*pathTree
}

func newPathTree(paths []wiretrim.Path) *pathTree {
	root := &pathTree{into: map[protowire.Number]*pathTree{}}
	for _, p := range paths {
		n := root
		for _, num := range p[:len(p)-1] {
			if n.into[num] == nil {
				n.into[num] = &pathTree{into: map[protowire.Number]*pathTree{}}
			}
			n = n.into[num]
		}
		n.drop = append(n.drop, p[len(p)-1])
	}
	return root
}

// protoNumber is the field number of a generated Go field (its protobuf tag), 0 for none.
func protoNumber(f reflect.StructField) protowire.Number {
	parts := strings.Split(f.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		return 0
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return 0
	}
	return protowire.Number(n)
}

// checkCleared walks before and after (the same object before and after
// clearRuntimeFields) along tree: every dropped field must be zero after, every other one
// unchanged, and the messages on the way are walked in (elements of a list each).
func checkCleared(t *testing.T, where string, tree *pathTree, before, after reflect.Value) {
	t.Helper()
	switch before.Kind() {
	case reflect.Pointer:
		if before.IsNil() {
			if !after.IsNil() {
				t.Errorf("%s: nil before, set after", where)
			}
			return
		}
		checkCleared(t, where, tree, before.Elem(), after.Elem())
		return
	case reflect.Slice:
		if before.Len() != after.Len() {
			t.Errorf("%s: %d elements before, %d after", where, before.Len(), after.Len())
			return
		}
		for i := range before.Len() {
			checkCleared(t, where+"["+strconv.Itoa(i)+"]", tree, before.Index(i), after.Index(i))
		}
		return
	case reflect.Struct:
	default:
		t.Fatalf("%s: a %s is not a message", where, before.Kind())
	}
	seen := map[protowire.Number]bool{}
	for i := range before.NumField() {
		f := before.Type().Field(i)
		num := protoNumber(f)
		seen[num] = true
		name := where + "." + f.Name
		switch {
		case slices.Contains(tree.drop, num):
			if !after.Field(i).IsZero() {
				t.Errorf("%s (field %d) is left out of the cache's pods but not cleared", name, num)
			}
		case tree.into[num] != nil:
			checkCleared(t, name, tree.into[num], before.Field(i), after.Field(i))
		case !apiequality.Semantic.DeepEqual(before.Field(i).Interface(), after.Field(i).Interface()):
			t.Errorf("%s (field %d) is not left out of the cache's pods but changed", name, num)
		}
	}
	for _, num := range tree.drop {
		if !seen[num] {
			t.Errorf("%s has no field %d: a wrong number in podfields.go", where, num)
		}
	}
}

// fuzzedPods are random pods with every field set.
func fuzzedPods(t *testing.T, n int) []*corev1.Pod {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	f := fuzzer.FuzzerFor(genericfuzzer.Funcs, rand.NewSource(seed), scheme.Codecs).NilChance(0).NumElements(1, 2)
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{}
		f.Fill(pods[i])
		pods[i].TypeMeta = corev1.Pod{}.TypeMeta
	}
	return pods
}

// TestPodFields_TheTransformClearsExactlyTheFieldsSkippedAtTheWire: on pods with every
// field set, clearRuntimeFields zeroes each field podWirePaths names (found by its
// protobuf number) and changes nothing else.
func TestPodFields_TheTransformClearsExactlyTheFieldsSkippedAtTheWire(t *testing.T) {
	tree := newPathTree(podWirePaths())
	for _, pod := range fuzzedPods(t, 20) {
		cleared := pod.DeepCopy()
		clearRuntimeFields(cleared)
		checkCleared(t, "pod", tree, reflect.ValueOf(pod), reflect.ValueOf(cleared))
	}
}

// TestPodFields_TheWireSkipsWhatTheTransformClears: random pods listed and watched in
// protobuf through the trim of podWirePaths decode as the whole pods with
// clearRuntimeFields applied.
func TestPodFields_TheWireSkipsWhatTheTransformClears(t *testing.T) {
	pods := fuzzedPods(t, 30)
	objs := make([]runtime.Object, len(pods))
	events := make([]wiretrimtest.Event, len(pods))
	for i, p := range pods {
		objs[i] = p
		events[i] = wiretrimtest.Event{Type: watch.Modified, Object: p}
	}
	list := &corev1.PodList{}
	if err := meta.SetList(list, objs); err != nil {
		t.Fatal(err)
	}
	listBytes, err := wiretrimtest.Object(list)
	if err != nil {
		t.Fatal(err)
	}
	watchBytes, err := wiretrimtest.Watch(events...)
	if err != nil {
		t.Fatal(err)
	}
	responder := wiretrimtest.Responder{List: listBytes, Watch: watchBytes}
	k := wiretrim.Kind{Version: "v1", Resource: "pods", Kind: "Pod", Drop: podWirePaths()}
	whole := listAndWatch(t, k, responder)
	trimmed := listAndWatch(t, k, wiretrim.Wrapper(k)(responder))
	if len(whole) != 2*len(pods) || len(trimmed) != len(whole) {
		t.Fatalf("decoded %d pods whole and %d trimmed, want %d", len(whole), len(trimmed), 2*len(pods))
	}
	for i := range whole {
		want := whole[i].(*corev1.Pod)
		clearRuntimeFields(want)
		if got := trimmed[i].(*corev1.Pod); !apiequality.Semantic.DeepEqual(want, got) {
			t.Fatalf("pod %d (-cleared +trimmed at the wire):\n%s", i, diff.Diff(want, got))
		}
	}
}

// TestPodFields_WholePodsKeepsEveryField: with --whole-pods the cache's transform and
// trim keep every field but managedFields.
func TestPodFields_WholePodsKeepsEveryField(t *testing.T) {
	pod := fuzzedPods(t, 1)[0]
	want := pod.DeepCopy()
	want.ManagedFields = nil
	out, err := podTransform(newSharedResourceLists(), true)(pod)
	if err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(out, want) {
		t.Fatalf("--whole-pods changed the pod (-want +got):\n%s", diff.Diff(want, out))
	}
	for _, k := range trimmedKinds(true) {
		if k.Kind == "Pod" && !slices.EqualFunc(k.Drop, []wiretrim.Path{wiretrim.ManagedFields}, slices.Equal) {
			t.Fatalf("--whole-pods still skips %v at the wire", k.Drop)
		}
	}
}
