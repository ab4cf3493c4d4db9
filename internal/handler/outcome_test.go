package handler

import (
	"testing"

	"github.com/seed0f91f25e/multicache/internal/stores"
)

// TestOKCounters_OnlyTheOperationsAKindIsGiven: the "ok" series served at 0 are a pod's
// lifecycle, a claim's assumption and forgetting, and every kind's add, update and delete;
// nothing else.
func TestOKCounters_OnlyTheOperationsAKindIsGiven(t *testing.T) {
	for _, c := range []struct {
		kind stores.Kind
		op   stores.Op
		want bool
	}{
		{stores.KindPod, stores.OpExpire, true},
		{stores.KindPod, stores.OpFinishBinding, true},
		{stores.KindResourceClaim, stores.OpAssume, true},
		{stores.KindResourceClaim, stores.OpForget, true},
		{stores.KindResourceClaim, stores.OpExpire, false},
		{stores.KindNode, stores.OpUpdate, true},
		{stores.KindNode, stores.OpAssume, false},
		{stores.KindReservation, stores.OpForget, false},
	} {
		if _, ok := okCounters[kindOp{c.kind, c.op}]; ok != c.want {
			t.Errorf("%s %s created ahead: %v, want %v", c.kind, c.op, ok, c.want)
		}
	}
	if got, want := len(okCounters), 7+5+10*3; got != want {
		t.Errorf("%d series created ahead, want %d", got, want)
	}
}

// TestAccept_CountsAnOperationNotCreatedAhead: an event of a pair no series was created
// ahead for is still counted (accept does not index a missing counter).
func TestAccept_CountsAnOperationNotCreatedAhead(t *testing.T) {
	h, _ := newQuietHandler(t)
	before := eventsTotal(t, string(stores.KindMovement), string(stores.OpExpire), "ok")
	h.accept(stores.KindMovement, stores.OpExpire)
	if got := eventsTotal(t, string(stores.KindMovement), string(stores.OpExpire), "ok"); got != before+1 {
		t.Errorf("counted %v, want %v", got, before+1)
	}
}
