package operator

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/api/v1alpha1"
	ts "github.com/seed0f91f25e/multicache/internal/testsupport"
)

// TestReservation_OnANodeThatDoesNotExistStaysPendingUntilItAppears: a Reservation naming
// a node with no Node, NMNode or CustomNodeResource is not placed (no
// "Reserved=True Placed" on a node that does not exist, nothing charged): it stays Pending
// with Reserved=False NodeNotFound saying which node, and is placed once the node appears.
func TestReservation_OnANodeThatDoesNotExistStaysPendingUntilItAppears(t *testing.T) {
	op := startOperator(t)
	ns := newNamespace(t)
	node := "no-such-node-" + ns
	r := ts.MakeReservation(ns, "r", node, "2", "1Gi", "app", "web")
	create(t, r)
	key := types.NamespacedName{Namespace: ns, Name: "r"}
	eventually(t, "Pending with NodeNotFound", func() (bool, string) {
		got := &v1alpha1.Reservation{}
		if err := env.Client.Get(ctx(), key, got); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ReservationConditionReserved)
		return got.Status.Phase == v1alpha1.ReservationPending && c != nil && c.Reason == "NodeNotFound" && c.Status == "False",
			fmt.Sprintf("%+v", got.Status)
	})
	if info, ok := op.Cache.NodeInfo(node); ok && !info.Requested.IsZero() {
		t.Errorf("the missing node is charged %+v", info.Requested)
	}
	if v, _ := op.Cache.Reservation(key); v.AwaitingNode != node || v.Phase != v1alpha1.ReservationPending {
		t.Errorf("cache view %+v, want Pending awaiting %s", v, node)
	}

	create(t, withoutUID(ts.MakeNode(node, "8", "16Gi")))
	eventually(t, "placed once the node exists", reservationPhase(key, v1alpha1.ReservationReserved, ""))
	eventually(t, "charged on the node", charged(op, node, 2000, 2000))
}
