package debug

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// turn lets one request at a time run an endpoint that costs the cache (the dump keeps a
// CPU busy for seconds at 150,000 pods; the comparison lists the whole cluster): another
// client meanwhile is answered 429 with a Retry-After of what the one under way likely has
// left.
type turn struct {
	// what names the work in the 429's message, e.g. "a dump of the cache is being written to
	// another client; one is written at a time".
	what string
	// busy is set while a request has the turn.
	busy atomic.Bool
	// started is when the request under way took the turn (Unix nanoseconds); lastTook how
	// long the last one held it (nanoseconds, 0 before the first).
	started, lastTook atomic.Int64
}

// take gives the turn to the request starting at start, or answers w 429 and returns false
// when another request has it. A request that gets the turn gives it back with done.
func (t *turn) take(w http.ResponseWriter, start time.Time) bool {
	if !t.busy.CompareAndSwap(false, true) {
		retry := t.retryAfter(time.Now())
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeJSON(w, http.StatusTooManyRequests, map[string]string{
			"error": fmt.Sprintf("%s: retry in %d seconds (the Retry-After header), when it has likely ended", t.what, retry),
		})
		return false
	}
	t.started.Store(start.UnixNano())
	return true
}

// done gives back the turn taken at start.
func (t *turn) done(start time.Time) {
	t.lastTook.Store(int64(time.Since(start)))
	t.busy.Store(false)
}

// retryAfter is the Retry-After of a 429, in seconds: what the request under way likely has
// left (the last one's duration less the time this one has run; without a last one, as
// long again as it has run; past the last one's duration, half as long again as it has run:
// the last one may have been cut short, or written to a faster client), within [1, 60].
// Before the request under way recorded its start, 1.
func (t *turn) retryAfter(now time.Time) int {
	started := t.started.Load()
	if started == 0 {
		return 1
	}
	ran := now.Sub(time.Unix(0, started))
	left := ran
	if last := time.Duration(t.lastTook.Load()); last > 0 {
		left = last - ran
		if left <= 0 {
			left = ran / 2
		}
	}
	secs := int(math.Ceil(left.Seconds()))
	return min(max(secs, 1), 60)
}
