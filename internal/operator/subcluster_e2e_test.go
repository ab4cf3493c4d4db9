package operator

import (
	"fmt"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestSubCluster_NMNodeAndCNRFollowTheirNodesShard: an NMNode or CNR belongs to the shard of
// the Node of the same name, whatever its own labels; when the Node leaves the shard, the
// node is no longer offered through them.
func TestSubCluster_NMNodeAndCNRFollowTheirNodesShard(t *testing.T) {
	const shardKey = "multicache.dev/shard"
	op := startOperator(t, func(o *Options) { o.SubClusterKey, o.SubCluster = shardKey, "follow" })
	node := withoutUID(ts.MakeNode("follow-1", "8", "16Gi", shardKey, "follow"))
	nm := withoutUID(ts.MakeNMNode("follow-1", "8", "16Gi", "6", "12Gi"))
	cnr := withoutUID(ts.MakeCNR("follow-1", "2", "4Gi"))
	// The agents' objects carry another shard's label: the Node decides.
	nm.Labels = map[string]string{shardKey: "elsewhere"}
	cnr.Labels = map[string]string{shardKey: "elsewhere"}
	nmStatus, cnrStatus := nm.Status, cnr.Status
	create(t, node, nm, cnr)
	nm.Status, cnr.Status = nmStatus, cnrStatus
	for _, o := range []client.Object{nm, cnr} {
		if err := env.Client.Status().Update(ctx(), o); err != nil {
			t.Fatal(err)
		}
	}
	offered := func(wantNode bool, cpu, bestEffort int64) func() (bool, string) {
		return func() (bool, string) {
			info, ok := op.Cache.NodeInfo("follow-1")
			if !ok {
				return cpu == 0 && bestEffort == 0 && !wantNode, "not cached"
			}
			return (info.Node != nil) == wantNode && info.Allocatable.MilliCPU == cpu && info.BestEffortAllocatable.MilliCPU == bestEffort,
				fmt.Sprintf("node %v allocatable %dm best-effort %dm", info.Node != nil, info.Allocatable.MilliCPU, info.BestEffortAllocatable.MilliCPU)
		}
	}
	eventually(t, "the shard's node is merged with its NMNode and CNR", offered(true, 6000, 2000))
	consistent(t, op)

	// The Node leaves the shard: its NMNode and CNR go with it.
	node.Labels[shardKey] = "other"
	if err := env.Client.Update(ctx(), node); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node that left is not offered through its agents' objects", offered(false, 0, 0))
	consistent(t, op)

	// And it comes back.
	node.Labels[shardKey] = "follow"
	if err := env.Client.Update(ctx(), node); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node that came back is merged again", offered(true, 6000, 2000))
	consistent(t, op)
	deleteNow(t, node, nm, cnr)
}

// TestSubCluster_ACustomLeaseIDStillGivesEachShardItsOwnLease runs two shards with the same
// custom --leader-election-id: both must lead, each on its own Lease.
func TestSubCluster_ACustomLeaseIDStillGivesEachShardItsOwnLease(t *testing.T) {
	ns := newNamespace(t)
	for _, shard := range []string{"Foo", "foo"} {
		startOperator(t, func(o *Options) {
			o.SubClusterKey, o.SubCluster = "multicache.dev/shard", shard
			o.LeaderElect, o.LeaderElectionNamespace, o.LeaderElectionID = true, ns, "custom-lock"
		})
	}
	for _, lease := range []string{"custom-lock--foo", "custom-lock-foo"} {
		eventually(t, "the lease "+lease+" is held", func() (bool, string) {
			l := &coordinationv1.Lease{}
			if err := env.Client.Get(ctx(), types.NamespacedName{Namespace: ns, Name: lease}, l); err != nil {
				return false, err.Error()
			}
			return ptr.Deref(l.Spec.HolderIdentity, "") != "", "no holder"
		})
	}
}
