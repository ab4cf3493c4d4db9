package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crhandler "sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/internal/stores/podgroupstore"
)

// Refeeder puts keys back into the queue of the feed that owns them, so that the feed
// reconciles them again: the verify loop's repair of drift. A reconcile that finds nothing
// changed produces no event, so re-feeding a key that was right costs one cache read.
type Refeeder struct {
	// feeds are the channels of the running feeds, by feed name.
	feeds map[string]chan event.TypedGenericEvent[reconcile.Request]
}

func newRefeeder() *Refeeder {
	return &Refeeder{feeds: map[string]chan event.TypedGenericEvent[reconcile.Request]{}}
}

// source returns the source a feed watches for re-fed keys.
func (r *Refeeder) source(feed string) source.TypedSource[reconcile.Request] {
	ch := make(chan event.TypedGenericEvent[reconcile.Request], 1024)
	r.feeds[feed] = ch
	return source.TypedChannel(ch, crhandler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(e.Object)
		},
	})
}

// Refeed queues the object of kind with key (as the compare endpoint renders it:
// "namespace/name", "name", or "Type/namespace/name" for owners) in its feed. It blocks
// while the feed's buffer is full, until ctx is done.
func (r *Refeeder) Refeed(ctx context.Context, kind stores.Kind, key string) error {
	feed, req, err := feedOfKey(kind, key)
	if err != nil {
		return err
	}
	ch, ok := r.feeds[feed]
	if !ok {
		return fmt.Errorf("no running feed %s for %s %q", feed, kind, key)
	}
	select {
	case ch <- event.TypedGenericEvent[reconcile.Request]{Object: req}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
		if src, n := podgroupstore.SourceOf(nn); src != stores.PodGroupSourceMulticache {
			return podGroupSourceFeedName(src), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: nn.Namespace, Name: n}}, nil
		}
	}
	return name, reconcile.Request{NamespacedName: nn}, nil
}

// feedNames are the controller names of the feeds, by kind (owners have one feed per type).
var feedNames = map[stores.Kind]string{
	stores.KindPod:         "pod-feed",
	stores.KindNode:        "node-feed",
	stores.KindNMNode:      "nmnode-feed",
	stores.KindCNR:         "cnr-feed",
	stores.KindPodGroup:    "podgroup-feed",
	stores.KindPDB:         "pdb-feed",
	stores.KindMovement:    "movement-feed",
	stores.KindReservation: "reservation-feed",
}

// ownerFeedName is the controller name of the feed of one workload type.
func ownerFeedName(ownerType string) string {
	return ownerType + "-owner-feed"
}
