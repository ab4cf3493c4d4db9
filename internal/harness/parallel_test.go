package harness

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestParallel_RetriesAFailedCallThenGoesOn(t *testing.T) {
	var calls [10]atomic.Int32
	err := Parallel(context.Background(), len(calls), 3, func(_ context.Context, i int) error {
		if calls[i].Add(1) == 1 && i%2 == 0 {
			return errors.New("timed out")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range calls {
		if want := int32(1 + (i+1)%2); calls[i].Load() != want {
			t.Errorf("item %d called %d times, want %d", i, calls[i].Load(), want)
		}
	}
}

func TestParallel_ALastingErrorIsReturnedNamingItsItem(t *testing.T) {
	var tries atomic.Int32
	err := Parallel(context.Background(), 1, 4, func(context.Context, int) error {
		tries.Add(1)
		return errors.New("invalid")
	})
	if err == nil || err.Error() != "item 0: invalid" || tries.Load() != 5 {
		t.Errorf("err %v after %d tries, want item 0: invalid after 5", err, tries.Load())
	}
}

func TestParallel_NoWorkersStillCallsEveryItem(t *testing.T) {
	var calls atomic.Int32
	if err := Parallel(context.Background(), 3, 0, func(context.Context, int) error { calls.Add(1); return nil }); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls with 0 workers, want 3", calls.Load())
	}
}
