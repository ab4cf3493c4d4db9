package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Summary is the median of one subject's cold starts.
type Summary struct {
	Subject                                     string
	Samples                                     int
	Full, CPU                                   time.Duration
	RSSAtFull, PeakRSS, SettledRSS, HeapAfterGC int64
	// APIServerCPU and EtcdCPU are what the start cost the control plane until full (zero
	// when it was not read).
	APIServerCPU, EtcdCPU time.Duration
	// NetAPIServerCPU is APIServerCPU less the API server's idle CPU over the window.
	NetAPIServerCPU time.Duration
}

// Summarise returns the median of every measure of each subject, in the order of subjects.
func Summarise(subjects []Subject, runs []ColdStart) []Summary {
	var out []Summary
	for _, s := range subjects {
		var mine []ColdStart
		for _, r := range runs {
			if r.Subject == s.Name {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		// The API server's costs, 0 when they were not read.
		api := func(f func(APICost) time.Duration) time.Duration {
			return median(mine, func(c ColdStart) time.Duration {
				if c.API == nil {
					return 0
				}
				return f(*c.API)
			})
		}
		out = append(out, Summary{
			Subject: s.Name, Samples: len(mine),
			Full:            median(mine, func(c ColdStart) time.Duration { return c.Full }),
			CPU:             median(mine, func(c ColdStart) time.Duration { return c.CPU }),
			RSSAtFull:       median(mine, func(c ColdStart) int64 { return c.RSSAtFull }),
			PeakRSS:         median(mine, func(c ColdStart) int64 { return c.PeakRSS }),
			SettledRSS:      median(mine, func(c ColdStart) int64 { return c.SettledRSS }),
			HeapAfterGC:     median(mine, func(c ColdStart) int64 { return c.HeapAfterGC }),
			APIServerCPU:    api(func(a APICost) time.Duration { return a.APIServerCPU }),
			NetAPIServerCPU: api(APICost.NetAPIServerCPU),
			EtcdCPU:         api(func(a APICost) time.Duration { return a.EtcdCPU }),
		})
	}
	return out
}

// median of f over xs (the lower middle one for an even count: a value that was measured).
func median[T any, V int64 | time.Duration](xs []T, f func(T) V) V {
	vs := make([]V, len(xs))
	for i, x := range xs {
		vs[i] = f(x)
	}
	slices.Sort(vs)
	return vs[(len(vs)-1)/2]
}

// WriteReport writes the markdown report of a run: the setting, the cold-start medians with
// multicache's ratios against each anchor, every round, the churn and the checks.
func WriteReport(w io.Writer, res *Result, machine string) {
	cfg := res.Config
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## bench-e2e, SIZE=%s\n\n", cfg.Size.Name)
	p("%s, %s. Cluster: %s; populated through the API in %.1fs (%d objects, %d writers). %d round(s), order rotated each round; medians.\n\n",
		res.Started.Format("2006-01-02 15:04 MST"), machine, cfg.Size, res.Population.Duration.Seconds(), res.Population.Objects, cfg.Writers, cfg.Rounds)

	writePods(p, res)

	sums := Summarise(cfg.Subjects, res.ColdStarts)
	by := map[string]Summary{}
	var names []string
	for _, s := range sums {
		by[s.Subject] = s
		names = append(names, s.Subject)
	}
	// The ratio columns: multicache against every anchor and, with a baseline build, the
	// baseline against the informer and multicache against the baseline.
	var ratios [][2]string
	for _, n := range names {
		if n != cfg.Multicache.Name && n != BaselineName {
			ratios = append(ratios, [2]string{cfg.Multicache.Name, n})
		}
	}
	_, hasBase := by[BaselineName]
	if hasBase {
		ratios = append(ratios, [2]string{BaselineName, "informer"}, [2]string{cfg.Multicache.Name, BaselineName})
	}
	p("### Cold start (median of %d)\n\n", cfg.Rounds)
	p("| | %s |", strings.Join(names, " | "))
	for _, r := range ratios {
		p(" %s / %s |", r[0], r[1])
	}
	p("\n|---|%s", strings.Repeat("---:|", len(names)+len(ratios)))
	p("\n")
	rows := []struct {
		name string
		get  func(Summary) float64
		fmt  string
	}{
		{"time to full (s)", func(s Summary) float64 { return s.Full.Seconds() }, "%.2f"},
		{"CPU to full (s)", func(s Summary) float64 { return s.CPU.Seconds() }, "%.2f"},
		{"RSS at full (MiB)", func(s Summary) float64 { return float64(s.RSSAtFull) / (1 << 20) }, "%.0f"},
		{"peak RSS, VmHWM (MiB)", func(s Summary) float64 { return float64(s.PeakRSS) / (1 << 20) }, "%.0f"},
		{"settled RSS (MiB)", func(s Summary) float64 { return float64(s.SettledRSS) / (1 << 20) }, "%.0f"},
		{"heap after GC (MiB)", func(s Summary) float64 { return float64(s.HeapAfterGC) / (1 << 20) }, "%.1f"},
		{"API server CPU to full (s)", func(s Summary) float64 { return s.APIServerCPU.Seconds() }, "%.2f"},
		{"API server CPU to full, net of idle (s)", func(s Summary) float64 { return s.NetAPIServerCPU.Seconds() }, "%.2f"},
		{"etcd CPU to full (s)", func(s Summary) float64 { return s.EtcdCPU.Seconds() }, "%.2f"},
	}
	for _, r := range rows {
		p("| %s |", r.name)
		for _, n := range names {
			p(" "+r.fmt+" |", r.get(by[n]))
		}
		for _, q := range ratios {
			p(" %s |", subjectRatio(by, q, r.get))
		}
		p("\n")
	}
	if hasBase {
		q := ratios[len(ratios)-1]
		p("\nmulticache / %s, two builds in the same rounds: time to full %s, CPU to full %s, settled RSS %s.\n",
			BaselineName, subjectRatio(by, q, rows[0].get), subjectRatio(by, q, rows[1].get), subjectRatio(by, q, rows[4].get))
	}
	p("\nEvery round (time to full s / CPU s / peak MiB / settled MiB / heap MiB):\n\n")
	p("| round | subject | full | CPU | peak | settled | heap | counts at full |\n|---:|---|---:|---:|---:|---:|---:|---|\n")
	for _, c := range append([]ColdStart{res.WarmUp}, res.ColdStarts...) {
		p("| %s | %s | %.2f | %.2f | %.0f | %.0f | %.1f | %s |\n", roundName(c.Round), c.Subject, c.Full.Seconds(), c.CPU.Seconds(),
			float64(c.PeakRSS)/(1<<20), float64(c.SettledRSS)/(1<<20), float64(c.HeapAfterGC)/(1<<20), c.Detail)
	}
	if len(res.StoreCheck) == 0 {
		p("\nmulticache's stores hold every populated object (multicache_store_objects checked per store).\n")
	} else {
		p("\n**multicache's stores differ from the population:** %s\n", strings.Join(res.StoreCheck, "; "))
	}
	writeAPICosts(p, res)

	if res.Churn != nil {
		p("\n### Pod churn against multicache\n\n")
		p("Each rate in three phases of %v: pod creates, label updates of populated pods, deletes of the created pods. ", cfg.Churn.Steps[0].Duration)
		p("Lag: API write answered -> multicache's `multicache_events_total{kind=\"Pod\"}` counter shows it applied (read every %v). ", cfg.Churn.Poll)
		p("Informer: the bare informer of pods and nodes (its own process, alongside multicache), its pod event counters read exactly as multicache's are: the informer's own lag at the same rate, measured the same way.\n\n")
		p("| rate (writes/s) | operation | achieved | writes | API write p50 (ms) | lag p50 (ms) | lag p99 (ms) | lag max (ms) | informer p50 (ms) | informer p99 (ms) | lag p99 / informer p99 | drain (ms) | multicache CPU (cores) | kept up |\n")
		p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n")
		for _, r := range res.Churn.Phases {
			cores := 0.0
			if r.Elapsed > 0 {
				cores = r.CPU.Seconds() / r.Elapsed.Seconds()
			}
			p("| %.0f | %s | %.0f | %d | %.1f | %.1f | %.1f | %.1f | %s | %.0f | %.2f | %s |\n", r.Step.Rate, opNames[r.Op], r.Achieved, r.Writes,
				msf(r.Write.P50), msf(r.Lag.P50), msf(r.Lag.P99), msf(r.Lag.Max), informerCells(r), msf(r.Drain), cores, yes(r.KeptUp))
		}
		p("\nThe measurement's cost: `/metrics?name[]=multicache_events_total` is %d bytes (multicache answers a read naming only its own families from their collectors alone); idle, multicache used %.3f cores, %.3f while it was read every %v (included in the CPU column).\n",
			res.Churn.ScrapeBytes, res.Churn.IdleCPU, res.Churn.PolledCPU, cfg.Churn.Poll)
		if res.VerifyRuns > 0 {
			p("\nmulticache's verify loop ran %d times while it served the churn, %.0f ms each on average; its invariant check ran again under one hold of the lock (its parts found something) %d times, cleared %d, confirmed %d.\n",
				res.VerifyRuns, res.VerifySeconds*1000/float64(res.VerifyRuns),
				res.VerifyRechecks["cleared"]+res.VerifyRechecks["confirmed"], res.VerifyRechecks["cleared"], res.VerifyRechecks["confirmed"])
		}
		p("\nAfter the churn: multicache settled RSS %s, peak %s, heap after GC %s; `/debug/cache/compare`: %d differences.\n",
			mib(res.AfterChurn.SettledRSS), mib(res.AfterChurn.PeakRSS), mib(res.AfterChurn.HeapAfterGC), len(res.Compare))
	}
	writeDebugCosts(p, res)
	writeShards(w, res)
	p("\nRun time: %s.\n", res.Duration.Round(time.Second))
}

// writeDebugCosts reports what the debug endpoints cost: the reads of /debug/cache made
// back to back while label updates were applied (the slowest, and the largest RSS rise),
// and the one GET of /debug/cache/compare.
func writeDebugCosts(p func(string, ...any), res *Result) {
	if res.Churn == nil {
		return
	}
	p("\n### Debug endpoints\n\n")
	p("| endpoint | reads | took (s) | CPU (s) | answer (bytes) | RSS before | RSS max during | RSS up |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	row := func(c EndpointCost, reads int) {
		p("| `%s` | %d | %.2f | %.2f | %d | %s | %s | %.1f%% |\n", c.Path, reads, c.Took.Seconds(), c.CPU.Seconds(), c.Bytes,
			mib(c.RSSBefore), mib(c.RSSMax), 100*c.RSSUp())
	}
	if dumps := res.Churn.Dumps; len(dumps) > 0 {
		slowest := slices.MaxFunc(dumps, func(a, b EndpointCost) int { return cmp.Compare(a.Took, b.Took) })
		highest := slices.MaxFunc(dumps, func(a, b EndpointCost) int { return cmp.Compare(a.RSSUp(), b.RSSUp()) })
		row(slowest, len(dumps))
		if highest.RSSUp() > slowest.RSSUp() {
			row(highest, len(dumps))
		}
	}
	if res.CompareCost.Path != "" {
		row(res.CompareCost, 1)
		if f := res.CompareFloor; len(f) > 0 {
			var sum time.Duration
			p("\nThe list floor of `/debug/cache/compare` (the same lists, metadata only, in the same pages, by a bare client in the harness, just before and just after it): ")
			for i, d := range f {
				if i > 0 {
					p(", ")
				}
				p("%.2f s", d.Seconds())
				sum += d
			}
			p("; the comparison took %.2fx their mean.\n", res.CompareCost.Took.Seconds()*float64(len(f))/sum.Seconds())
		}
	}
	if r := res.Churn.DuringDump; r != nil {
		p("\nFor `/debug/cache`, the slowest of its reads (and the one that raised RSS most, when another). ")
		p("Label updates at %.0f/s while it was read back to back: lag p50 %.1f ms, p99 %.1f ms, max %.1f ms (the informer read alike p50, p99, ratio of the p99s: %s); kept up: %s.\n",
			r.Step.Rate, msf(r.Lag.P50), msf(r.Lag.P99), msf(r.Lag.Max), strings.ReplaceAll(informerCells(*r), " |", ","), yes(r.KeptUp))
	}
}

// subjectRatio is q[0]'s figure over q[1]'s, or a dash when either subject did not run.
func subjectRatio(by map[string]Summary, q [2]string, get func(Summary) float64) string {
	num, ok := by[q[0]]
	den, ok2 := by[q[1]]
	if !ok || !ok2 || get(den) <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", get(num)/get(den))
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// informerCells are the churn table's cells of the bare informer read alike: its lag p50
// and p99 in ms and multicache's p99 over its own, or dashes when it did not run.
func informerCells(r ChurnResult) string {
	if r.InformerLag.N == 0 {
		return "- | - | -"
	}
	ratio := "-"
	if r.InformerLag.P99 > 0 {
		ratio = fmt.Sprintf("%.2fx", r.Lag.P99.Seconds()/r.InformerLag.P99.Seconds())
	}
	s := fmt.Sprintf("%.1f | %.1f | %s", msf(r.InformerLag.P50), msf(r.InformerLag.P99), ratio)
	if r.InformerMissing > 0 {
		s += fmt.Sprintf(" (%d missing)", r.InformerMissing)
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// EmitReport prints a run's report, with a line when the run stopped early (runErr), and
// writes it to out when set; it returns runErr, else what the writing failed with. cmd
// names the command in its message to stderr.
func EmitReport(cmd, report string, runErr error, out string) error {
	if runErr != nil {
		report += fmt.Sprintf("\n**The run stopped early:** %v\n", runErr)
	}
	fmt.Print(report)
	if out != "" {
		if err := os.WriteFile(out, []byte(report), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: report written to %s\n", cmd, out)
	}
	return runErr
}

// StartCommand begins a bench command's run: dir, when empty, becomes a new temporary
// directory (said on stderr); the context ends on SIGINT or SIGTERM.
func StartCommand(cmd string, dir *string) (context.Context, context.CancelFunc, error) {
	if *dir == "" {
		var err error
		if *dir, err = os.MkdirTemp("", cmd+"-"); err != nil {
			return nil, nil, err
		}
	}
	fmt.Fprintf(os.Stderr, "%s: logs in %s\n", cmd, *dir)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx, stop, nil
}

// NeedBinaries fails on the first of bins (a path and the make target that builds it) that
// is missing; an empty path is an optional binary not asked for.
func NeedBinaries(bins ...[2]string) error {
	for _, b := range bins {
		if _, err := os.Stat(b[0]); b[0] != "" && err != nil {
			return fmt.Errorf("%w (make %s builds it)", err, b[1])
		}
	}
	return nil
}
