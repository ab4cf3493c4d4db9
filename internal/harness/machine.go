package harness

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
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
