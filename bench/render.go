package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteTable writes the side-by-side table in Markdown: for every operation and variant,
// the medians of ns/op, allocs/op and B/op, the compared metric when it is not ns/op, the
// ratio to kube (median of the paired rounds, with their range), the target and whether it
// is met. It returns how many targets were met out of how many.
func WriteTable(out io.Writer, rows []*Row, rounds int) (met, targets int) {
	fmt.Fprintf(out, "| operation | variant | ns/op | allocs/op | B/op | metric | ratio to kube (%d rounds: median, range) | target | met |\n", rounds)
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|:---:|")
	for _, r := range rows {
		for _, v := range Variants {
			if len(r.Runs[v.Name]) == 0 {
				continue
			}
			metric := ""
			if r.Unit != "ns/op" {
				metric = fmt.Sprintf("%s %s", num(r.Median(v.Name, func(x Run) float64 { return x.Metric })), r.Unit)
			}
			ratio, target, ok := "1 (anchor)", "", ""
			if v.Name != Kube.Name {
				med, lo, hi := r.Ratio(v.Name)
				bound, has := Target(r.Op, v.Name)
				// Two decimals, or three when two would hide which side of the bound it is.
				prec := 2
				if has && math.Abs(med-bound) < 0.005 {
					prec = 3
				}
				ratio = fmt.Sprintf("**%.*fx** (%.2f–%.2f)", prec, med, lo, hi)
				if has {
					targets++
					target = fmt.Sprintf("≤ %.1fx", bound)
					ok = "no"
					if med <= bound {
						met++
						ok = "yes"
					}
				}
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Op.Name, v.Name,
				num(r.Median(v.Name, func(x Run) float64 { return x.NsPerOp })),
				num(r.Median(v.Name, func(x Run) float64 { return x.AllocsPerOp })),
				num(r.Median(v.Name, func(x Run) float64 { return x.BytesPerOp })),
				metric, ratio, target, ok)
		}
	}
	fmt.Fprintf(out, "\nTargets met: %d of %d.\n", met, targets)
	return met, targets
}

// num formats a figure with thousands separators, keeping one decimal under 100.
func num(x float64) string {
	if x < 100 {
		s := fmt.Sprintf("%.1f", x)
		return strings.TrimSuffix(s, ".0")
	}
	s := fmt.Sprintf("%.0f", x)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
