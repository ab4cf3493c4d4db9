package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// RecordFile is the file in a run's directory that holds its Record.
const RecordFile = "cold-starts.json"

// Record is what a run writes of its cold starts (RecordFile), for a later run to compare
// with.
type Record struct {
	Size       Size
	WarmUp     ColdStart
	ColdStarts []ColdStart
}

// ReadRecord reads the Record of an earlier run: path is its RecordFile or its directory.
func ReadRecord(path string) (*Record, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, RecordFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w (the %s of an earlier run's -dir)", err, RecordFile)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("-baseline %s: %w", path, err)
	}
	if len(r.ColdStarts) == 0 {
		return nil, fmt.Errorf("-baseline %s: no cold starts", path)
	}
	return &r, nil
}

// writeBaseline compares the run's medians with the baseline's, subject by subject: the
// differences, their cost per added device and claim, and multicache's ratios to
// kube-scheduler in both (with devices they should stay where they were without).
func writeBaseline(p func(string, ...any), res *Result) {
	base := res.Config.Baseline
	if base == nil {
		return
	}
	now, was := res.Config.Size, base.Size
	dDevices, dClaims := now.Devices()-was.Devices(), now.Claims()-was.Claims()
	p("\n### Against the baseline run\n\n")
	p("Baseline: %s. This run: %s. Added: %d devices (in %d ResourceSlices), %d allocated claims. ",
		was, now, dDevices, now.ResourceSlices()-was.ResourceSlices(), dClaims)
	if now.Nodes != was.Nodes || now.Pods != was.Pods {
		p("**The nodes or pods differ: the differences are not the devices' alone.** ")
	}
	per, what := 0, ""
	switch {
	case dDevices != 0 && dClaims == 0:
		per, what = dDevices, "device"
	case dClaims != 0 && dDevices == 0:
		per, what = dClaims, "claim"
	case dDevices != 0:
		per, what = dDevices, "device (with its share of the claims: both changed, see BENCHMARKS.md to split them)"
	}
	p("Medians; differences are this run's less the baseline's.\n\n")
	ours := Summarise(res.Config.Subjects, res.ColdStarts)
	theirs := map[string]Summary{}
	for _, s := range summariseRecord(base) {
		theirs[s.Subject] = s
	}
	p("| subject | time to full (s) | CPU to full (s) | settled RSS (MiB) | heap after GC (MiB) | API server CPU net of idle (s) |")
	if per != 0 {
		p(" per %s: time (µs), CPU (µs), settled RSS (B), heap (B) |", what)
	}
	p("\n|---|---:|---:|---:|---:|---:|")
	if per != 0 {
		p("---|")
	}
	p("\n")
	for _, s := range ours {
		b, ok := theirs[s.Subject]
		if !ok {
			continue
		}
		dFull, dCPU := s.Full-b.Full, s.CPU-b.CPU
		dRSS, dHeap := s.SettledRSS-b.SettledRSS, s.HeapAfterGC-b.HeapAfterGC
		p("| %s | %.2f → %.2f (%+.2f) | %.2f → %.2f (%+.2f) | %.0f → %.0f (%+.0f) | %.1f → %.1f (%+.1f) | %.2f → %.2f (%+.2f) |", s.Subject,
			b.Full.Seconds(), s.Full.Seconds(), dFull.Seconds(), b.CPU.Seconds(), s.CPU.Seconds(), dCPU.Seconds(),
			mibf(b.SettledRSS), mibf(s.SettledRSS), mibf(dRSS), mibf(b.HeapAfterGC), mibf(s.HeapAfterGC), mibf(dHeap),
			b.NetAPIServerCPU.Seconds(), s.NetAPIServerCPU.Seconds(), (s.NetAPIServerCPU - b.NetAPIServerCPU).Seconds())
		if per != 0 {
			p(" %.1f, %.1f, %.0f, %.0f |", usPer(dFull, per), usPer(dCPU, per), float64(dRSS)/float64(per), float64(dHeap)/float64(per))
		}
		p("\n")
	}
	mc, sched := res.Config.Multicache.Name, "kube-scheduler"
	mcNow, ok1 := find(ours, mc)
	kNow, ok2 := find(ours, sched)
	mcWas, ok3 := theirs[mc]
	kWas, ok4 := theirs[sched]
	if ok1 && ok2 && ok3 && ok4 {
		ratio := func(a, b float64) string {
			if b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", a/b)
		}
		p("\nmulticache / kube-scheduler, baseline → this run: time to full %s → %s, CPU to full %s → %s, peak RSS %s → %s, settled RSS %s → %s.\n",
			ratio(mcWas.Full.Seconds(), kWas.Full.Seconds()), ratio(mcNow.Full.Seconds(), kNow.Full.Seconds()),
			ratio(mcWas.CPU.Seconds(), kWas.CPU.Seconds()), ratio(mcNow.CPU.Seconds(), kNow.CPU.Seconds()),
			ratio(float64(mcWas.PeakRSS), float64(kWas.PeakRSS)), ratio(float64(mcNow.PeakRSS), float64(kNow.PeakRSS)),
			ratio(float64(mcWas.SettledRSS), float64(kWas.SettledRSS)), ratio(float64(mcNow.SettledRSS), float64(kNow.SettledRSS)))
	}
}

// summariseRecord is Summarise over a Record's cold starts, its subjects in their order.
func summariseRecord(r *Record) []Summary {
	var subjects []Subject
	seen := map[string]bool{}
	for _, c := range r.ColdStarts {
		if !seen[c.Subject] {
			seen[c.Subject] = true
			subjects = append(subjects, Subject{Name: c.Subject})
		}
	}
	return Summarise(subjects, r.ColdStarts)
}

func find(sums []Summary, name string) (Summary, bool) {
	for _, s := range sums {
		if s.Subject == name {
			return s, true
		}
	}
	return Summary{}, false
}

func mibf(b int64) float64 { return float64(b) / (1 << 20) }

func usPer(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }
