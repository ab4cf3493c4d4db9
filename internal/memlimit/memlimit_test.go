package memlimit

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func writeLimit(t *testing.T, file, content string) string {
	t.Helper()
	root := t.TempDir()
	path := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestSet_FollowsTheContainerLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for _, tc := range []struct {
		name, file, content string
		want                int64
	}{
		{"cgroup v2 limit", "sys/fs/cgroup/memory.max", "1073741824\n", 966367641},
		{"cgroup v2 no limit", "sys/fs/cgroup/memory.max", "max\n", 0},
		{"cgroup v1 limit", "sys/fs/cgroup/memory/memory.limit_in_bytes", "2147483648\n", 1932735283},
		{"cgroup v1 no limit", "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n", 0},
		{"no cgroup files", "elsewhere", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Set(writeLimit(t, tc.file, tc.content), DefaultFraction)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("set %d, want %d", got, tc.want)
			}
			if tc.want > 0 && debug.SetMemoryLimit(-1) != tc.want {
				t.Errorf("the runtime's limit is %d", debug.SetMemoryLimit(-1))
			}
		})
	}
}

func TestSet_BadInputSaysWhatIsWrong(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	root := writeLimit(t, "sys/fs/cgroup/memory.max", "lots")
	if _, err := Set(root, DefaultFraction); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("error %v does not show the bad value", err)
	}
	if _, err := Set(t.TempDir(), 1.5); err == nil || !strings.Contains(err.Error(), "1.5") {
		t.Errorf("error %v does not reject the fraction", err)
	}
}

func TestSet_GOMEMLIMITWins(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "100MiB")
	got, err := Set(writeLimit(t, "sys/fs/cgroup/memory.max", "1073741824"), DefaultFraction)
	if err != nil || got != 0 {
		t.Errorf("set %d (%v) despite GOMEMLIMIT", got, err)
	}
}
