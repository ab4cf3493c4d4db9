package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Refeeder puts keys back into the queue of the feed that owns them, so that the feed
// applies them again from the manager's cache: the verify loop's repair of drift. A key that
// was right costs one cache read (the handler finds nothing changed).
type Refeeder struct {
	// feeds are the running feeds, by name.
	feeds map[string]*feed
}

func newRefeeder() *Refeeder {
	return &Refeeder{feeds: map[string]*feed{}}
}

// Refeed queues the object of kind with key (as the compare endpoint renders it:
// "namespace/name", "name", or "Type/namespace/name" for owners) in its feed. The queue
// holds a key once however often it is queued, so it never blocks.
func (r *Refeeder) Refeed(_ context.Context, kind stores.Kind, key string) error {
	name, req, err := feedOfKey(kind, key)
	if err != nil {
		return err
	}
	f, ok := r.feeds[name]
	if !ok {
		return fmt.Errorf("no running feed %s for %s %q", name, kind, key)
	}
	f.enqueueRepair(req.NamespacedName)
	return nil
}

// feedOfKey finds the feed and the request of a rendered key.
func feedOfKey(kind stores.Kind, key string) (string, reconcile.Request, error) {
	if kind == stores.KindOwner {
		parts := strings.SplitN(key, "/", 3)
		if len(parts) != 3 {
			return "", reconcile.Request{}, fmt.Errorf("owner key %q is not Type/namespace/name", key)
		}
		return ownerFeedName(parts[0]), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: parts[1], Name: parts[2]}}, nil
	}
	name, ok := feedNames[kind]
	if !ok {
		return "", reconcile.Request{}, fmt.Errorf("no feed for kind %s", kind)
	}
	nn := types.NamespacedName{Name: key}
	if ns, n, found := strings.Cut(key, "/"); found {
		nn = types.NamespacedName{Namespace: ns, Name: n}
	}
	if kind == stores.KindPodGroup {
		// A group of another API than multicache's own has its source in its key.
		if src, n := podgroupstore.SourceOf(nn); src != store.PodGroupSourceMulticache {
			return podGroupSourceFeedName(src), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: nn.Namespace, Name: n}}, nil
		}
	}
	return name, reconcile.Request{NamespacedName: nn}, nil
}

// feedNames are the controller names of the feeds, by kind (owners have one feed per type).
var feedNames = map[stores.Kind]string{
	stores.KindPod:           "pod-feed",
	stores.KindNode:          "node-feed",
	stores.KindNMNode:        "nmnode-feed",
	stores.KindCNR:           "cnr-feed",
	stores.KindPodGroup:      "podgroup-feed",
	stores.KindPDB:           "pdb-feed",
	stores.KindMovement:      "movement-feed",
	stores.KindReservation:   "reservation-feed",
	stores.KindResourceSlice: "resourceslice-feed",
	stores.KindResourceClaim: "resourceclaim-feed",
	stores.KindDeviceClass:   "deviceclass-feed",
}

// ownerFeedName is the controller name of the feed of one workload type.
func ownerFeedName(ownerType string) string {
	return ownerType + "-owner-feed"
}
