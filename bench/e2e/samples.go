package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// writeSamples writes one phase's writes to dir, in lag-<rate>-<operation><suffix>.tsv
// (created anew): per line, when the write returned (seconds after multicache started), its
// lag in multicache and in the informer (ms; - when not seen or not run).
func writeSamples(dir string, step ChurnStep, op int, suffix string, returns []time.Time, lags, infLags []time.Duration, started time.Time) error {
	name := filepath.Join(dir, fmt.Sprintf("lag-%.0f-%s%s.tsv", step.Rate, opNames[op], suffix))
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("lag samples: %w", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "returned_s\tmulticache_ms\tinformer_ms")
	show := func(l []time.Duration, i int) string {
		if i >= len(l) {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(l[i])/1e6)
	}
	for i, ret := range returns {
		fmt.Fprintf(w, "%.4f\t%s\t%s\n", ret.Sub(started).Seconds(), show(lags, i), show(infLags, i))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("lag samples: %w", err)
	}
	return f.Close()
}
