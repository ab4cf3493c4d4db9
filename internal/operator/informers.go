package operator

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/seed0f91f25e/multicache/internal/reconnect"
)

// reconnectingInformer builds the manager's informers on ListerWatchers that wait for an
// unreachable API server themselves (see package reconnect), so that they come back as soon
// as it does instead of after client-go's grown backoff.
func reconnectingInformer(log logr.Logger) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(reconnect.Wrap(lw, fmt.Sprintf("%T", obj), log), obj, resync, indexers)
	}
}
