package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// attemptTimeout bounds one call of Parallel's do.
const attemptTimeout = 30 * time.Second

// Parallel calls do(i) for every i in [0, n) from workers goroutines (at least one) and
// returns the first lasting error, after which the remaining items are not started. A
// failed call, whatever its error, is retried four times, backing off from 100 ms to
// 800 ms: the API server of a loaded machine times out now and then. Nothing outlasts an
// API server that stays down longer than that.
func Parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(max(workers, 1), n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := retry(ctx, func(ctx context.Context) error { return do(ctx, i) }); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("item %d: %w", i, err) })
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// attempts is how many times retry calls f.
const attempts = 5

// retry calls f until it succeeds or has failed attempts times, and returns f's last
// error (with the context's when it ended the wait for the next attempt).
func retry(ctx context.Context, f func(context.Context) error) error {
	for attempt := range attempts {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		err := f(actx)
		cancel()
		if err == nil || attempt == attempts-1 {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	return nil // not reached: the last attempt returns
}

// Create creates obj; if a retried create finds it already there (the first attempt went
// through but its answer was lost), it reads it back instead.
func Create(ctx context.Context, c client.Client, obj client.Object) error {
	err := c.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	}
	return err
}
