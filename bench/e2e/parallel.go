package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// parallel calls do(i) for every i in [0, n) from writers goroutines and returns the first
// error. A call that fails with an error the API server means as "try again" (timeouts,
// throttling, conflicts on status writes) is retried a few times.
func parallel(ctx context.Context, n, writers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		errOnce  sync.Once
		firstErr error
	)
	var wg sync.WaitGroup
	for range min(writers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := retry(ctx, func() error { return do(ctx, i) }); err != nil {
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

// retry calls f until it succeeds, fails for good, or has failed five times.
func retry(ctx context.Context, f func() error) error {
	var err error
	for attempt := range 5 {
		if err = f(); err == nil || !retriable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
	return err
}

func retriable(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsConflict(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}
