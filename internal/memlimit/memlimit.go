// Package memlimit sets the Go runtime's soft memory limit from the container's memory
// limit, so that the garbage collector works harder before the kernel's OOM killer would.
// A cache sized to its memory limit otherwise grows until it is killed: the Go heap target
// (GOGC=100) is twice the live heap, and nothing tells the runtime where the wall is. The
// Deployment hands the limit over through the Downward API (LimitEnv); the runtime has no
// percentage of its own, so Set takes Fraction of it. Once the cache caught up, Steady
// lowers the heap target for the steady state.
package memlimit

import (
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"
)

// LimitEnv is the variable the Deployment sets to the container's memory limit: the
// Downward API's resourceFieldRef limits.memory with divisor 1, a number of bytes (without
// a limit the kubelet gives the node's allocatable memory).
const LimitEnv = "MULTICACHE_MEMORY_LIMIT"

// Fraction of the container's limit becomes the Go soft limit: the rest is left for what
// the Go runtime does not count (stacks of exited threads, C allocations, page cache).
const Fraction = 0.9

// Set sets the soft memory limit to Fraction of $MULTICACHE_MEMORY_LIMIT (bytes, or a
// Kubernetes quantity such as 2Gi) unless GOMEMLIMIT is set, which wins (the runtime read
// it at start). It returns the limit set, 0 when none was, and an error naming the variable
// when its value is not a positive quantity of memory; the limit is then left as it was.
func Set() (int64, error) {
	v := os.Getenv(LimitEnv)
	if v == "" || os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(v)
	soft := int64(float64(q.Value()) * Fraction)
	if err != nil || soft <= 0 {
		return 0, fmt.Errorf("%s=%q is not a positive number of bytes: set it from the Downward API (resourceFieldRef limits.memory, divisor 1) or unset it", LimitEnv, v)
	}
	debug.SetMemoryLimit(soft)
	return soft, nil
}
