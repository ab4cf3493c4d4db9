package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// HoldSample is one read of every node of multicache between two lists of the API,
// judged by AccountNode (CPU in millis).
type HoldSample struct {
	// At is the middle of the read of multicache; Span the time from the start of the
	// first list to the end of the second.
	At   time.Time
	Span time.Duration
	// Phase is the run's phase then (rollout, settle-rollout, scale-down, settle-scale-down).
	Phase string
	// Charged, Legit and Excess are the sums over the nodes.
	Charged, Legit, Excess int64
	// Worst is the node with the largest excess (the first node when none has any).
	Worst NodeAccount
	// NodesWithExcess counts the nodes with a positive excess.
	NodesWithExcess int
	// Holds are the holds charged on every node; Unjustified those nothing is coming for.
	Holds       int
	Unjustified []string
	// Stale counts the pods multicache charged that the API had deleted (StaleCPU).
	Stale    int
	StaleCPU int64
}

// holdSampler samples multicache's nodes until its context ends.
type holdSampler struct {
	c         client.Client
	namespace string
	debugURL  string
	nodes     []string
	pods      PodIndex
	// dir receives the evidence of the first samples with an excess (at most maxEvidence).
	dir   string
	phase atomic.Pointer[string]
	// previous is the second list of the last sample (used by sample only).
	previous *APIList

	mu       sync.Mutex
	samples  []HoldSample
	errors   int
	lastErr  error
	evidence []string
}

const maxEvidence = 3

func (s *holdSampler) setPhase(p string) { s.phase.Store(&p) }

// run samples every period (a sample starts when the previous one ended, at the earliest
// period after it started).
func (s *holdSampler) run(ctx context.Context, period time.Duration) {
	for ctx.Err() == nil {
		start := time.Now()
		smp, views, err := s.sample(ctx)
		s.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				s.errors++
				s.lastErr = err
			}
		} else {
			s.samples = append(s.samples, smp)
		}
		keep := err == nil && smp.Excess > 0 && len(s.evidence) < maxEvidence
		s.mu.Unlock()
		if keep {
			s.keepEvidence(ctx, smp, views)
		}
		select {
		case <-ctx.Done():
		case <-time.After(period - time.Since(start)):
		}
	}
}

// sample lists the API, reads every node of multicache, lists the API again and judges
// each node.
func (s *holdSampler) sample(ctx context.Context) (HoldSample, []NodeView, error) {
	t0 := time.Now()
	before, err := s.list(ctx)
	if err != nil {
		return HoldSample{}, nil, err
	}
	r0 := time.Now()
	views, err := s.readNodes(ctx)
	if err != nil {
		return HoldSample{}, nil, err
	}
	r1 := time.Now()
	after, err := s.list(ctx)
	if err != nil {
		return HoldSample{}, nil, err
	}
	smp := HoldSample{At: r0.Add(r1.Sub(r0) / 2), Span: time.Since(t0), Phase: *s.phase.Load()}
	var earlier []APIList
	if s.previous != nil {
		earlier = append(earlier, *s.previous)
	}
	s.previous = &after
	for i, v := range views {
		a := AccountNode(v, before, after, s.pods, earlier...)
		smp.Charged += a.Charged
		smp.Legit += a.Legit()
		smp.Excess += a.Excess
		smp.Holds += a.Holds
		smp.Unjustified = append(smp.Unjustified, a.Unjustified...)
		smp.Stale += len(a.StalePods)
		smp.StaleCPU += a.Stale
		if a.Excess > 0 {
			smp.NodesWithExcess++
		}
		if i == 0 || a.Excess > smp.Worst.Excess {
			smp.Worst = a
		}
	}
	return smp, views, nil
}

func (s *holdSampler) list(ctx context.Context) (APIList, error) {
	var pods corev1.PodList
	if err := s.c.List(ctx, &pods, client.InNamespace(s.namespace)); err != nil {
		return APIList{}, fmt.Errorf("listing pods: %w", err)
	}
	var sets appsv1.ReplicaSetList
	if err := s.c.List(ctx, &sets, client.InNamespace(s.namespace)); err != nil {
		return APIList{}, fmt.Errorf("listing ReplicaSets: %w", err)
	}
	var deployments appsv1.DeploymentList
	if err := s.c.List(ctx, &deployments, client.InNamespace(s.namespace)); err != nil {
		return APIList{}, fmt.Errorf("listing Deployments: %w", err)
	}
	return NewAPIList(pods.Items, sets.Items, deployments.Items), nil
}

// readNodes reads /debug/cache/nodes/<name> of every node, eight at a time.
func (s *holdSampler) readNodes(ctx context.Context) ([]NodeView, error) {
	views := make([]NodeView, len(s.nodes))
	var g errgroup.Group
	g.SetLimit(8)
	for i, node := range s.nodes {
		g.Go(func() error {
			body, err := harness.Get(ctx, s.debugURL+"/debug/cache/nodes/"+node, harness.RequestTimeout)
			if err == nil {
				err = json.Unmarshal(body, &views[i])
			}
			if err != nil {
				return fmt.Errorf("reading node %s from multicache: %w", node, err)
			}
			return nil
		})
	}
	return views, g.Wait()
}

// keepEvidence writes a sample with an excess, the views of its nodes and multicache's
// whole dump read right after into dir (excess-<n>.json, excess-<n>-dump.json).
func (s *holdSampler) keepEvidence(ctx context.Context, smp HoldSample, views []NodeView) {
	s.mu.Lock()
	n := len(s.evidence)
	s.mu.Unlock()
	base := filepath.Join(s.dir, fmt.Sprintf("excess-%d", n))
	data, _ := json.MarshalIndent(map[string]any{"sample": smp, "nodes": views}, "", "  ")
	note := base + ".json"
	if err := os.WriteFile(note, data, 0o644); err != nil {
		note = err.Error()
	}
	if dump, err := harness.Get(ctx, s.debugURL+"/debug/cache", time.Minute); err == nil {
		if os.WriteFile(base+"-dump.json", dump, 0o644) == nil {
			note += fmt.Sprintf(" and %s-dump.json (read %v after the sample)", base, time.Since(smp.At).Round(time.Millisecond))
		}
	}
	s.mu.Lock()
	s.evidence = append(s.evidence, note)
	s.mu.Unlock()
}

// result returns the samples taken, the failed ones, and the evidence files.
func (s *holdSampler) result() ([]HoldSample, int, error, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]HoldSample(nil), s.samples...), s.errors, s.lastErr, append([]string(nil), s.evidence...)
}
