package debug

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// Difference is one object on which the cache and the API disagree.
type Difference struct {
	Kind stores.Kind `json:"kind"`
	Key  string      `json:"key"`
	// Problem is "missing from cache", "stale in cache" (another resource version) or
	// "not in API".
	Problem      string `json:"problem"`
	CacheVersion string `json:"cacheVersion,omitempty"`
	APIVersion   string `json:"apiVersion,omitempty"`
}

// listing is how to list the API objects of one kind, keyed like the handler's last-seen.
type listing struct {
	kind stores.Kind
	list func() client.ObjectList
	// key renders an item's key; nil means namespace/name (or name when cluster-scoped).
	key func(client.Object) string
}

var listings = []listing{
	{stores.KindPod, func() client.ObjectList { return &corev1.PodList{} }, nil},
	{stores.KindNode, func() client.ObjectList { return &corev1.NodeList{} }, nil},
	{stores.KindNMNode, func() client.ObjectList { return &v1alpha1.NMNodeList{} }, nil},
	{stores.KindCNR, func() client.ObjectList { return &v1alpha1.CustomNodeResourceList{} }, nil},
	{stores.KindPodGroup, func() client.ObjectList { return &v1alpha1.PodGroupList{} }, nil},
	{stores.KindPDB, func() client.ObjectList { return &policyv1.PodDisruptionBudgetList{} }, nil},
	{stores.KindMovement, func() client.ObjectList { return &v1alpha1.MovementList{} }, nil},
	{stores.KindReservation, func() client.ObjectList { return &v1alpha1.ReservationList{} }, nil},
	{stores.KindOwner, func() client.ObjectList { return &appsv1.ReplicaSetList{} }, ownerKey(v1alpha1.OwnerReplicaSet)},
	{stores.KindOwner, func() client.ObjectList { return &appsv1.StatefulSetList{} }, ownerKey(v1alpha1.OwnerStatefulSet)},
	{stores.KindOwner, func() client.ObjectList { return &appsv1.DaemonSetList{} }, ownerKey(v1alpha1.OwnerDaemonSet)},
	{stores.KindOwner, func() client.ObjectList { return &appsv1.DeploymentList{} }, ownerKey(v1alpha1.OwnerDeployment)},
}

func ownerKey(t v1alpha1.OwnerType) func(client.Object) string {
	return func(o client.Object) string {
		return stores.OwnerKey{Type: t, Namespace: o.GetNamespace(), Name: o.GetName()}.String()
	}
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	diffs, err := s.Compare(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, diffs)
}

// Compare lists, for every kind the cache watches, the objects on which the cache and the
// API disagree. Assumed pods the API has not reported yet are not differences.
func (s *Server) Compare(ctx context.Context) ([]Difference, error) {
	diffs := []Difference{}
	for _, kind := range s.handler.WatchedKinds() {
		cached := s.handler.LastSeenVersions(kind)
		api := map[string]string{}
		for _, l := range listings {
			if l.kind != kind {
				continue
			}
			if err := s.listInto(ctx, l, api); err != nil {
				return nil, fmt.Errorf("listing %s: %w", kind, err)
			}
		}
		for key, apiRV := range api {
			cacheRV, ok := cached[key]
			switch {
			case !ok:
				diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: "missing from cache", APIVersion: apiRV})
			case cacheRV != apiRV:
				diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: "stale in cache", CacheVersion: cacheRV, APIVersion: apiRV})
			}
		}
		for key, cacheRV := range cached {
			if _, ok := api[key]; !ok {
				diffs = append(diffs, Difference{Kind: kind, Key: key, Problem: "not in API", CacheVersion: cacheRV})
			}
		}
	}
	sort.Slice(diffs, func(i, j int) bool {
		if diffs[i].Kind != diffs[j].Kind {
			return diffs[i].Kind < diffs[j].Kind
		}
		return diffs[i].Key < diffs[j].Key
	})
	return diffs, nil
}

func (s *Server) listInto(ctx context.Context, l listing, out map[string]string) error {
	list := l.list()
	if err := s.api.List(ctx, list); err != nil {
		return err
	}
	return meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if s.keep != nil {
			keep, err := s.keep(ctx, l.kind, obj)
			if err != nil || !keep {
				return err
			}
		}
		key := obj.GetName()
		switch {
		case l.key != nil:
			key = l.key(obj)
		case obj.GetNamespace() != "":
			key = obj.GetNamespace() + "/" + key
		}
		out[key] = obj.GetResourceVersion()
		return nil
	})
}
