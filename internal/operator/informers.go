package operator

import (
	"context"
	"fmt"
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
func reconnectingInformer(log logr.Logger, ready func(context.Context) error) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		wrapped := reconnect.Wrap(lw, fmt.Sprintf("%T", obj), log)
		wrapped.Ready = ready
		return toolscache.NewSharedIndexInformer(wrapped, obj, resync, indexers)
	}
}
