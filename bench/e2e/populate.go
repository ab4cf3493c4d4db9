package e2e

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// Population is what Populate wrote and how long it took.
type Population struct {
	Size     Size
	Objects  int
	Duration time.Duration
	// Steps are the kinds written, in order, with how long each took.
	Steps []PopulatedKind
	// ReplicaSetUIDs are the UIDs of the ReplicaSets, by index (churn pods name them as owner).
	ReplicaSetUIDs []types.UID
}

// Populate writes the cluster of the given size through the API with writers parallel
// writers: namespaces, nodes (with status), NMNodes and CNRs (status through the
// subresource), ReplicaSets, their pods (bound through spec.nodeName, pod i on node i mod
// Nodes; realistic ones written twice, their status by the kubelet's field manager, when
// size.RealisticPods), PodGroups, PDBs and Reservations; with devices (size.DevicesPerNode), a
// DeviceClass, a ResourceSlice per node and the allocated claims (devices.go). Progress
// goes to log.
func Populate(ctx context.Context, c client.Client, size Size, writers int, log io.Writer) (*Population, error) {
	start := time.Now()
	pop := &Population{Size: size, ReplicaSetUIDs: make([]types.UID, size.ReplicaSets())}
	if size.DevicesPerNode > 0 {
		if err := checkDRAServed(c); err != nil {
			return nil, err
		}
	}
	steps := []populateStep{
		{"namespaces", size.Namespaces(), func(ctx context.Context, i int) error { return harness.Create(ctx, c, MakeNamespace(i)) }},
		{"nodes", size.Nodes, func(ctx context.Context, i int) error { return harness.Create(ctx, c, MakeNode(i)) }},
		{"nmnodes", size.NMNodes(), func(ctx context.Context, i int) error {
			obj := MakeNMNode(i)
			return createWithStatus(ctx, c, obj, func() { obj.Status = MakeNMNode(i).Status })
		}},
		{"cnrs", size.CNRs(), func(ctx context.Context, i int) error {
			obj := MakeCNR(i)
			return createWithStatus(ctx, c, obj, func() { obj.Status = MakeCNR(i).Status })
		}},
		{"replicasets", size.ReplicaSets(), func(ctx context.Context, r int) error {
			rs := MakeReplicaSet(r, podsOf(size, r))
			if err := harness.Create(ctx, c, rs); err != nil {
				return err
			}
			pop.ReplicaSetUIDs[r] = rs.UID
			return nil
		}},
		{"pods", size.Pods, func(ctx context.Context, i int) error {
			r := i / PodsPerReplicaSet
			if size.RealisticPods {
				return CreateRealisticPod(ctx, c, r, i%PodsPerReplicaSet, pop.ReplicaSetUIDs[r], i%size.Nodes)
			}
			return harness.Create(ctx, c, MakePod(r, i%PodsPerReplicaSet, pop.ReplicaSetUIDs[r], NodeName(i%size.Nodes)))
		}},
		{"podgroups", size.PodGroups(), func(ctx context.Context, k int) error {
			return harness.Create(ctx, c, MakePodGroup(k*ReplicaSetsPerPodGroup))
		}},
		{"pdbs", size.PDBs(), func(ctx context.Context, k int) error { return harness.Create(ctx, c, MakePDB(k*ReplicaSetsPerPDB)) }},
		{"reservations", size.Reservations(), func(ctx context.Context, k int) error { return harness.Create(ctx, c, MakeReservation(k)) }},
	}
	steps = append(steps, devicesSteps(c, size)...)
	for _, s := range steps {
		t := time.Now()
		if err := harness.Parallel(ctx, s.n, writers, s.do); err != nil {
			return nil, fmt.Errorf("populating %s: %w", s.what, err)
		}
		pop.Objects += s.n
		d := time.Since(t)
		pop.Steps = append(pop.Steps, PopulatedKind{What: s.what, Objects: s.n, Duration: d})
		fmt.Fprintf(log, "  %-12s %7d in %6.1fs (%.0f/s)\n", s.what, s.n, d.Seconds(), float64(s.n)/max(d.Seconds(), 1e-3))
	}
	pop.Duration = time.Since(start)
	return pop, nil
}

// PopulatedKind is one kind Populate wrote: how many and how long it took.
type PopulatedKind struct {
	What     string
	Objects  int
	Duration time.Duration
}

// populateStep writes n objects of one kind, do(i) the i-th.
type populateStep struct {
	what string
	n    int
	do   func(ctx context.Context, i int) error
}

// podsOf is how many pods ReplicaSet r owns.
func podsOf(size Size, r int) int {
	return min(PodsPerReplicaSet, size.Pods-r*PodsPerReplicaSet)
}

// createWithStatus creates obj, then has setStatus put back the status the create dropped
// and writes it through the status subresource.
func createWithStatus(ctx context.Context, c client.Client, obj client.Object, setStatus func()) error {
	if err := harness.Create(ctx, c, obj); err != nil {
		return err
	}
	setStatus()
	return c.Status().Update(ctx, obj)
}

// createNodes creates n nodes (MakeNode: allocatable in their status, which a node keeps on
// create; Ready) and lifts the not-ready taint the API server's admission puts on a new
// node (the node lifecycle controller would, once the kubelet reports Ready; neither runs
// here).
func createNodes(ctx context.Context, c client.Client, n, writers int) error {
	return harness.Parallel(ctx, n, writers, func(ctx context.Context, i int) error {
		node := MakeNode(i)
		if err := harness.Create(ctx, c, node); err != nil {
			return err
		}
		if len(node.Spec.Taints) == 0 {
			return nil
		}
		return c.Patch(ctx, node, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"taints":null}}`)))
	})
}
