package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/seed0f91f25e/multicache/internal/harness"
)

// EndpointCost is what one GET of a debug endpoint cost multicache: how long it took, the
// CPU it used meanwhile, the size of the answer and its RSS before, at most during (read
// every rssPoll) and after.
type EndpointCost struct {
	Path                        string
	Took                        time.Duration
	CPU                         time.Duration
	Bytes                       int
	RSSBefore, RSSMax, RSSAfter int64
}

// RSSUp is how much the endpoint lifted RSS, as a share of RSS before it.
func (c EndpointCost) RSSUp() float64 {
	if c.RSSBefore == 0 {
		return 0
	}
	return float64(c.RSSMax-c.RSSBefore) / float64(c.RSSBefore)
}

// rssPoll is how often RSS is read while a debug endpoint answers.
const rssPoll = 20 * time.Millisecond

// MeasureEndpoint GETs path of multicache's debug server once and measures what it cost.
func MeasureEndpoint(ctx context.Context, in *Instance, path string, timeout time.Duration) (EndpointCost, []byte, error) {
	c := EndpointCost{Path: path}
	m0, err := ReadMem(in.Pid())
	if err != nil {
		return c, nil, err
	}
	cpu0, err := ReadCPU(in.Pid())
	if err != nil {
		return c, nil, err
	}
	c.RSSBefore, c.RSSMax = m0.RSS, m0.RSS
	pollCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(rssPoll)
		defer t.Stop()
		for {
			select {
			case <-pollCtx.Done():
				return
			case <-t.C:
				if m, err := ReadMem(in.Pid()); err == nil {
					c.RSSMax = max(c.RSSMax, m.RSS)
				}
			}
		}
	})
	start := time.Now()
	body, err := harness.Get(ctx, DebugURL(in)+path, timeout)
	c.Took = time.Since(start)
	stop()
	wg.Wait()
	if err != nil {
		return c, body, err
	}
	c.Bytes = len(body)
	cpu1, err := ReadCPU(in.Pid())
	if err != nil {
		return c, body, err
	}
	c.CPU = cpu1 - cpu0
	m1, err := ReadMem(in.Pid())
	if err != nil {
		return c, body, err
	}
	c.RSSAfter, c.RSSMax = m1.RSS, max(c.RSSMax, m1.RSS)
	return c, body, nil
}

// dumpsDuring GETs /debug/cache back to back until ctx ends, so that a churn phase run
// meanwhile measures whether events keep being applied while the dump is written. It
// returns the costs of the dumps that completed.
func dumpsDuring(ctx context.Context, in *Instance, log io.Writer) []EndpointCost {
	var costs []EndpointCost
	for ctx.Err() == nil {
		c, _, err := MeasureEndpoint(ctx, in, "/debug/cache", 5*time.Minute)
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(log, "  /debug/cache: %v\n", err)
			}
			return costs
		}
		costs = append(costs, c)
	}
	return costs
}

func logEndpoint(log io.Writer, c EndpointCost) {
	fmt.Fprintf(log, "  GET %s: %.2fs, %.2f CPU s, %d bytes, RSS %s -> max %s (+%.1f%%) -> %s\n", c.Path, c.Took.Seconds(),
		c.CPU.Seconds(), c.Bytes, mib(c.RSSBefore), mib(c.RSSMax), 100*c.RSSUp(), mib(c.RSSAfter))
}

// readCompare returns the differences in a multicache instance's /debug/cache/compare: in
// body when it was read already, else in a GET of it.
func readCompare(ctx context.Context, in *Instance, body []byte) ([]json.RawMessage, error) {
	var err error
	if body == nil {
		if body, err = harness.Get(ctx, DebugURL(in)+"/debug/cache/compare", 5*time.Minute); err != nil {
			return nil, err
		}
	}
	var diffs []json.RawMessage
	if err := json.Unmarshal(body, &diffs); err != nil {
		return nil, fmt.Errorf("/debug/cache/compare: %w: %.200s", err, body)
	}
	return diffs, nil
}
