package handler

import (
	"fmt"
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// rendered renders a RangeVersions key as LastSeenVersions keys it.
func rendered(ownerType string, key types.NamespacedName) string {
	switch {
	case ownerType != "":
		return ownerType + "/" + key.Namespace + "/" + key.Name
	case key.Namespace != "":
		return key.String()
	}
	return key.Name
}

// TestRangeVersions_ReadsEveryLastSeenObject: for every watched kind, more than a part of
// pods, an assumed pod the API has not reported (left out) and owners of two types under
// one name, RangeVersions produces each last-seen object once, and LastSeenVersion finds
// each of them and nothing under another kind's or type's key; LastSeenVersions keys them as
// the drift comparison renders keys.
func TestRangeVersions_ReadsEveryLastSeenObject(t *testing.T) {
	h, _ := populated(t, 20, podsPerHold+10)
	must(t, h.AssumePod(ts.MakePod("ns", "assumed", ts.OnNode("n-0001"), ts.Requests("1", "1Gi"))))
	for _, o := range []*store.Owner{ts.MakeOwner(v1alpha1.OwnerDeployment, "ns", "web"), ts.MakeOwner(v1alpha1.OwnerReplicaSet, "ns", "web")} {
		o.ResourceVersion = string(o.Type)
		must(t, h.Add(o))
	}
	must(t, h.Add(ts.MakePDB("ns", "budget", 1, "app", "x")))
	for _, kind := range h.WatchedKinds() {
		got := map[string]string{}
		if !h.RangeVersions(kind, func(ownerType string, key types.NamespacedName, version string) {
			got[rendered(ownerType, key)] = version
			if v, ok := h.LastSeenVersion(kind, ownerType, key); !ok || v != version {
				t.Errorf("%s %s: LastSeenVersion = %q, %v; RangeVersions %q", kind, rendered(ownerType, key), v, ok, version)
			}
		}) {
			t.Errorf("RangeVersions does not know the watched kind %s", kind)
		}
		if want := map[stores.Kind]int{stores.KindPod: podsPerHold + 10, stores.KindNode: 20, stores.KindOwner: 2, stores.KindPDB: 1}[kind]; len(got) != want {
			t.Errorf("%s: RangeVersions read %d objects, want %d", kind, len(got), want)
		}
		if keyed := h.LastSeenVersions(kind); !maps.Equal(got, keyed) {
			t.Errorf("%s: LastSeenVersions keys %d objects otherwise than the comparison does", kind, len(keyed))
		}
	}
	if v, ok := h.LastSeenVersion(stores.KindOwner, string(v1alpha1.OwnerReplicaSet), types.NamespacedName{Namespace: "ns", Name: "web"}); !ok || v != "ReplicaSet" {
		t.Errorf("the ReplicaSet ns/web: %q, %v", v, ok)
	}
	for _, c := range []struct {
		kind      stores.Kind
		ownerType string
		key       types.NamespacedName
	}{
		{stores.KindPod, "", types.NamespacedName{Namespace: "ns", Name: "assumed"}},
		{stores.KindPod, "Deployment", types.NamespacedName{Namespace: "ns", Name: "p-00001"}},
		{stores.KindOwner, "", types.NamespacedName{Namespace: "ns", Name: "web"}},
		{stores.KindOwner, "StatefulSet", types.NamespacedName{Namespace: "ns", Name: "web"}},
		{stores.KindNode, "", types.NamespacedName{Namespace: "ns", Name: "n-0001"}},
		{stores.KindPDB, "", types.NamespacedName{Name: "budget"}},
		{"NoSuchKind", "", types.NamespacedName{Name: "n-0001"}},
	} {
		if v, ok := h.LastSeenVersion(c.kind, c.ownerType, c.key); ok {
			t.Errorf("LastSeenVersion(%s, %q, %s) = %q: found what is not there", c.kind, c.ownerType, c.key, v)
		}
	}
	if h.RangeVersions("NoSuchKind", func(string, types.NamespacedName, string) {}) {
		t.Error("RangeVersions ranged over a kind the handler does not keep")
	}
}

// TestRangeVersions_InPartsWithEventsBetween: pods moved between two parts are produced
// at their last version or their first, and every pod left alone is produced.
func TestRangeVersions_InPartsWithEventsBetween(t *testing.T) {
	nodes, pods := 2*nodesPerHold+10, 2*podsPerHold+100
	h, held := populated(t, nodes, pods)
	first := held[0].ResourceVersion
	moved := 0
	h.afterPart = func() {
		for i := moved; i < moved+50; i++ {
			p := ts.MakePod("ns", held[i].Name, ts.OnNode(fmt.Sprintf("n-%04d", (i+1)%nodes)), ts.Requests("200m", "64Mi"))
			p.ResourceVersion = "moved"
			must(t, h.Delete(held[i]))
			must(t, h.Add(p))
		}
		moved += 50
	}
	got := map[string]string{}
	h.RangeVersions(stores.KindPod, func(_ string, key types.NamespacedName, version string) {
		if version != first && version != "moved" {
			t.Errorf("pod %s produced at %q", key, version)
		}
		got[key.String()] = version
	})
	h.afterPart = nil
	for _, p := range held[moved:] {
		if _, ok := got["ns/"+p.Name]; !ok {
			t.Errorf("pod %s, left alone, not produced", p.Name)
		}
	}
}
