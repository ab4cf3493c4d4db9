package harness

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
)

// Machine describes where a benchmark ran: CPUs, their model, memory, Go and the commit of
// the main module at repoRoot (with "+dirty" when its working tree has changes).
func Machine(repoRoot string) string {
	model, memKB := "unknown CPU", int64(0)
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		_, _ = fmt.Sscanf(string(data), "MemTotal: %d kB", &memKB)
	}
	commit := "unknown commit"
	if out, err := exec.Command("git", "-C", repoRoot, "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if out, err := exec.Command("git", "-C", repoRoot, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(out) > 0 {
			commit += "+dirty"
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %.0f GiB, %s %s/%s, multicache %s", runtime.NumCPU(), model, float64(memKB)/(1<<20),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, commit)
}

// Counts writes m as "key value, ..." in the keys' order, or "none" when it is empty: the
// counters a report lists.
func Counts[V int | float64](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %v", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
