package controllers

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// eventSource is the reporting controller of multicache's Events.
const eventSource = "multicache"

// NewRecorder returns the recorder of the Events the status writers, the replacement
// controller and the siblings record. Without a fence (no leader election) it is the
// manager's. With one, an Event recorded while the fence is closed is dropped (a replica that
// does not hold the lease emits none), and the Events recorded are sent through a client
// fenced as the writers' (fencedConfig): one still queued when the lease's renew deadline
// passes is refused unsent, like any write. The manager's own recorder is not fenced.
func NewRecorder(mgr manager.Manager, fence Fence) (events.EventRecorder, error) {
	if fence == nil {
		return mgr.GetEventRecorder(eventSource), nil
	}
	sink, err := eventsv1client.NewForConfig(fencedConfig(mgr.GetConfig(), fence))
	if err != nil {
		return nil, fmt.Errorf("the Events' client: %w", err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: sink})
	if err := mgr.Add(eventBroadcaster{b}); err != nil {
		return nil, err
	}
	return fencedRecorder{EventRecorder: b.NewRecorder(mgr.GetScheme(), eventSource), fence: fence}, nil
}

// fencedRecorder drops the Events recorded while fence is closed.
type fencedRecorder struct {
	events.EventRecorder
	fence Fence
}

// Eventf implements events.EventRecorder.
func (r fencedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if _, err := r.fence(); err != nil {
		return
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// eventBroadcaster sends the recorded Events to the API while the manager runs, on every
// replica (the recorder is what drops a standby's).
type eventBroadcaster struct{ events.EventBroadcaster }

// Start implements manager.Runnable.
func (b eventBroadcaster) Start(ctx context.Context) error {
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("sending Events: %w", err)
	}
	<-ctx.Done()
	b.Shutdown()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (eventBroadcaster) NeedLeaderElection() bool { return false }
