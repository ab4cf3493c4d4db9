// Package memlimit sets the Go runtime's soft memory limit from the container's memory
// limit, so that the garbage collector works harder before the kernel's OOM killer would.
// A cache sized to its memory limit otherwise grows until it is killed: the Go heap target
// (GOGC=100) is twice the live heap, and nothing tells the runtime where the wall is. Once
// the cache caught up, Steady lowers that target for the steady state.
package memlimit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// DefaultFraction of the container's limit becomes the Go soft limit: the rest is left for
// what the Go runtime does not count (stacks of exited threads, C allocations, page cache).
const DefaultFraction = 0.9

// cgroupFiles are where the container's memory limit is, cgroup v2 first, then v1.
var cgroupFiles = []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"}

// noLimitV1 is at or above what cgroup v1 reports when there is no limit (a page-aligned
// max int64).
const noLimitV1 = math.MaxInt64 / 2

// Set sets the soft memory limit to fraction of the container's limit read under root ("/"
// in production) unless GOMEMLIMIT is set, which wins. It returns the limit set, 0 when
// none was (no container limit, or GOMEMLIMIT set), and an error when a limit file exists
// but cannot be understood.
func Set(root string, fraction float64) (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	if fraction <= 0 || fraction > 1 {
		return 0, fmt.Errorf("memory limit fraction %v is not in (0, 1]", fraction)
	}
	limit, err := containerLimit(root)
	if err != nil || limit == 0 {
		return 0, err
	}
	soft := int64(float64(limit) * fraction)
	debug.SetMemoryLimit(soft)
	return soft, nil
}

// containerLimit reads the memory limit of the cgroup the process runs in; 0 when there is
// none.
func containerLimit(root string) (int64, error) {
	for _, f := range cgroupFiles {
		path := filepath.Join(root, f)
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reading the container memory limit: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, nil
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("the container memory limit in %s is %q, not a positive number of bytes", path, s)
		}
		if v >= noLimitV1 {
			return 0, nil
		}
		return v, nil
	}
	return 0, nil
}
