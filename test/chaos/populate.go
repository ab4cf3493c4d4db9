package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Populate creates the cluster the operators start on: Config.Nodes nodes with their
// NMNode and CNR, Config.Pods pods bound round-robin (one in ten best-effort), some running
// gangs, and Config.BaseReservations reservations nobody matches.
func (w *Workload) Populate(ctx context.Context) error {
	nodes := make([]string, w.cfg.Nodes)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n-%04d", i)
	}
	w.mu.Lock()
	w.nodes = nodes
	w.mu.Unlock()
	if err := harness.Parallel(ctx, len(nodes), 16, func(ctx context.Context, i int) error {
		return w.CreateNode(ctx, nodes[i])
	}); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	if err := harness.Parallel(ctx, w.cfg.Pods, 32, func(ctx context.Context, i int) error {
		name, node := fmt.Sprintf("p-base-%06d", i), nodes[i%len(nodes)]
		return w.createPod(ctx, newPod(w.ns, name, node, i%10 == 9), PodIntent{Name: name, Class: "plain", Node: node})
	}); err != nil {
		return fmt.Errorf("pods: %w", err)
	}
	if err := harness.Parallel(ctx, w.cfg.BaseReservations, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("r-base-%05d", i)
		return w.createRsv(ctx, RsvIntent{Name: name, Class: "base", Node: nodes[(i*7)%len(nodes)], TTL: longTTL}, LabelNobody, name)
	}); err != nil {
		return fmt.Errorf("reservations: %w", err)
	}
	gangs := max(2, w.cfg.Pods/200)
	for range gangs {
		if err := w.createGroupRuns(ctx); err != nil {
			return fmt.Errorf("gangs: %w", err)
		}
	}
	// The gangs' members are follow-up steps: run them now, before the operators start.
	poll(2*time.Minute, 100*time.Millisecond, func() bool {
		for _, s := range w.takeDue(time.Now()) {
			w.runStep(ctx, s)
		}
		return w.PendingSteps() == 0
	})
	return nil
}
