package operator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seed0f91f25e/multicache/internal/reconnect"
)

// reconnectingInformer builds the manager's informers on ListerWatchers that wait for an
// unreachable API server themselves, and once it answers again for it to be ready (see
// package reconnect), so that they come back as soon as it does instead of after
// client-go's grown backoff or a starting API server's Retry-After.
// Each informer's type is recorded in opened.
func reconnectingInformer(log logr.Logger, ready func(context.Context) error, opened *openedInformers) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(reconnecting(log, ready, opened, obj)(lw), obj, resync, indexers)
	}
}

// reconnecting wraps the ListerWatchers of obj's type like reconnectingInformer's (a
// shard's per-node pod watches are reflectors, not informers: nodepods.Set) and records
// the type in opened.
func reconnecting(log logr.Logger, ready func(context.Context) error, opened *openedInformers, obj runtime.Object) func(toolscache.ListerWatcher) toolscache.ListerWatcher {
	return func(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
		opened.add(fmt.Sprintf("%T", obj))
		wrapped := reconnect.Wrap(lw, fmt.Sprintf("%T", obj), log)
		wrapped.Ready = ready
		return wrapped
	}
}

// openedInformers are the types of the informers the manager's cache opened: what this
// replica watches (a disabled store's kinds must not be among them).
type openedInformers struct {
	mu    sync.Mutex
	types []string
}

func (o *openedInformers) add(t string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.types = append(o.types, t)
}

// list returns the types opened so far.
func (o *openedInformers) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.types)
}
