package memlimit

import (
	"runtime/debug"
	"strings"
	"testing"
)

// keepLimit restores the process's soft limit after a test that sets it.
func keepLimit(t *testing.T) int64 {
	t.Helper()
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	return before
}

func TestSet_TakesTheFractionOfTheDownwardAPILimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	for _, tc := range []struct {
		value string
		want  int64
	}{
		{"1000000000", 900_000_000}, // what the Downward API gives with divisor 1
		{"2Gi", 1932735283},         // a quantity set by hand
	} {
		t.Run(tc.value, func(t *testing.T) {
			keepLimit(t)
			t.Setenv(LimitEnv, tc.value)
			got, err := Set()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || debug.SetMemoryLimit(-1) != tc.want {
				t.Errorf("Set() = %d, runtime limit %d; want %d", got, debug.SetMemoryLimit(-1), tc.want)
			}
		})
	}
}

// TestSet_GOMEMLIMITWinsAndNoVariableSetsNothing: Set leaves the runtime's limit alone.
func TestSet_GOMEMLIMITWinsAndNoVariableSetsNothing(t *testing.T) {
	for _, tc := range []struct{ name, gomemlimit, limit string }{
		{"GOMEMLIMIT set", "3GiB", "1000000000"},
		{"no variable", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := keepLimit(t)
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			t.Setenv(LimitEnv, tc.limit)
			if got, err := Set(); got != 0 || err != nil {
				t.Errorf("Set() = %d, %v; want 0, nil", got, err)
			}
			if now := debug.SetMemoryLimit(-1); now != before {
				t.Errorf("the runtime limit moved from %d to %d", before, now)
			}
		})
	}
}

func TestSet_RejectsWhatIsNotAPositiveQuantity(t *testing.T) {
	before := keepLimit(t)
	t.Setenv("GOMEMLIMIT", "")
	for _, bad := range []string{"lots", "2 GiB", "-1", "0", "1e-9"} {
		t.Setenv(LimitEnv, bad)
		got, err := Set()
		if err == nil {
			t.Errorf("%s=%q: Set() = %d, want an error", LimitEnv, bad, got)
			continue
		}
		for _, want := range []string{LimitEnv, `"` + bad + `"`, "Downward API"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s=%q: error %q does not say %q", LimitEnv, bad, err, want)
			}
		}
		if now := debug.SetMemoryLimit(-1); now != before {
			t.Errorf("%s=%q: the runtime limit moved from %d to %d", LimitEnv, bad, before, now)
		}
	}
}
