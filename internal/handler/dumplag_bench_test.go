package handler

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/seed0f91f25e/multicache/internal/memlimit"
	mcmetrics "github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
)

// dumpLagRate is bench-e2e's churn rate for the phase during dumps (label updates a second).
const dumpLagRate = 60

// dumpLagWindow is how long each case updates labels per round: 300 updates at 60/s.
// DUMPLAG_WINDOW (a duration) changes it.
func dumpLagWindow(b *testing.B) time.Duration {
	if s := os.Getenv("DUMPLAG_WINDOW"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("DUMPLAG_WINDOW=%q: %v (want a duration such as 10s)", s, err)
		}
		return d
	}
	return 5 * time.Second
}

// BenchmarkDumpLag is bench-e2e's "label update while /debug/cache is read back to back" in
// process, on bench-e2e's large cache (fillWorld: 5,000 nodes, 150,000 pods) at the steady
// GC percent: one goroutine applies pod label updates at 60/s (Sync, as the pod feed
// does) while, in the dumping cases, another dumps back to back into io.Discard ("discard")
// or through an HTTP server whose client reads the body ("http"; "http-slow": at 16 MiB/s);
// "-before" dumps as WriteDump did before it rested between parts (dumpDuty 1), "-quarter"
// at dumpDuty 0.25; "verify" runs the verify loop's passes over the cache back to back
// (CheckInvariants, RangeVersions); "idle" nothing. "-scraped" adds bench-e2e's probe, a
// read of /metrics?name[]=multicache_events_total every 2 ms (eventsScraper). The cases
// alternate, a window each, round after round. Each reports, per update, the lag (from the
// moment the update was due to the handler having applied it), the wake (due to the updater
// running again: the scheduling of its goroutine and thread), the apply (Sync alone: the
// wait for the lock and the work) and, when scraped, seen (due to the middle of the first
// read showing it: bench-e2e's lag, less the informer), p50, p99 and max; the dumps (or
// verify passes) completed; and over its windows the garbage collections, their
// stop-the-world pauses, the CPU the goroutines spent assisting them, the time the
// process's threads waited on the OS's run queue (/proc/self/task/*/schedstat) and the
// process's CPU. Run with the CPUs of bench-e2e's machine:
//
//	go test -run '^$' -bench BenchmarkDumpLag -benchtime 1x -cpu 2 ./internal/handler
//
// DUMPLAG_CASES=<name>,... runs only those cases; DUMPLAG_ROUNDS and DUMPLAG_WINDOW set the
// rounds (3) and each window (5s), DUMPLAG_GOGC the GC percent (the steady one, 50); DUMPLAG_TRACE=<prefix> writes a runtime/trace of each
// case's window to <prefix>-<case>.trace (go tool trace).
func BenchmarkDumpLag(b *testing.B) {
	w := newFillWorld()
	h, _ := newQuietHandler(b)
	w.fillObjects(b, h)
	w.fillPods(b, h)
	// The collector as the operator sets it once the cache caught up.
	defer debug.SetGCPercent(debug.SetGCPercent(dumpLagGCPercent(b)))
	runtime.GC()
	window := dumpLagWindow(b)
	discard := func(write func(context.Context, io.Writer) error) func(context.Context) error {
		return func(ctx context.Context) error { return write(ctx, io.Discard) }
	}
	verify := func(ctx context.Context) error {
		if errs := h.CheckInvariants(); len(errs) > 0 {
			return errs[0]
		}
		h.RangeVersions(stores.KindPod, func(string, types.NamespacedName, string) {})
		return ctx.Err()
	}
	scrape := eventsScraper(b)
	dump := func(ctx context.Context, w io.Writer) error { return h.WriteDump(ctx, w, DumpCompact) }
	indented := func(ctx context.Context, w io.Writer) error { return h.WriteDump(ctx, w, DumpIndented) }
	cases := []dumpLagCase{
		{"idle", 1, nil, nil},
		{"idle-scraped", 1, nil, scrape},
		{"verify", 1, verify, nil},
		{"verify-scraped", 1, verify, scrape},
		{"discard-before", 1, discard(dump), nil},
		{"discard", dumpDuty, discard(dump), nil},
		{"http-before", 1, httpDumper(b, dump), nil},
		{"http", dumpDuty, httpDumper(b, dump), nil},
		{"http-scraped", dumpDuty, httpDumper(b, dump), scrape},
		{"http-slow", dumpDuty, slowHTTPDumper(b, dump), nil},
		{"http-indented", dumpDuty, httpDumper(b, indented), nil},
		{"discard-quarter", 0.25, discard(dump), nil},
		{"http-quarter", 0.25, httpDumper(b, dump), nil},
	}
	if only := os.Getenv("DUMPLAG_CASES"); only != "" {
		names := strings.Split(only, ",")
		cases = slices.DeleteFunc(cases, func(c dumpLagCase) bool { return !slices.Contains(names, c.name) })
		if len(cases) == 0 {
			b.Fatalf("DUMPLAG_CASES=%q names no case", only)
		}
	}
	// The cases alternate, a window each, round after round (the machine is shared: its load
	// drifts), and each reports what its windows measured together.
	runs := make([]dumpLagRun, len(cases))
	duty := dumpDuty
	defer func() { dumpDuty = duty }()
	for round := range dumpLagRounds(b) {
		for i, c := range cases {
			dumpDuty = c.duty
			before := readDumpLagCounters()
			r := dumpLag(b, h, w.pods[len(w.pods)/2], window, c.dump, c.scrape, fmt.Sprintf("%s-%d", c.name, round))
			after := readDumpLagCounters()
			runs[i].add(r, after.minus(before))
		}
	}
	for i, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r := runs[i]
				reportLags(b, "lag", r.lags)
				reportLags(b, "apply", r.applies)
				reportLags(b, "wake", r.wakes)
				if len(r.seen) > 0 {
					reportLags(b, "seen", r.seen)
				}
				b.ReportMetric(float64(r.dumps), "dumps")
				b.ReportMetric(float64(r.counters.gcs), "gcs")
				b.ReportMetric(r.counters.gcPause.Seconds()*1e3, "gc-stw-ms")
				b.ReportMetric(r.counters.assist.Seconds()*1e3, "gc-assist-cpu-ms")
				b.ReportMetric(r.counters.osWait.Seconds()*1e3, "os-runqueue-ms")
				b.ReportMetric(r.counters.cpu.Seconds()*1e3, "cpu-ms")
			}
		})
	}
}

// dumpLagCase is what runs beside the label updates: dump back to back (none: nil) at duty,
// while scrape (none: nil) reads the events counter.
type dumpLagCase struct {
	name   string
	duty   float64
	dump   func(ctx context.Context) error
	scrape func(ctx context.Context) []scrapeSample
}

// dumpLagGCPercent is the collector's GC percent during the windows: the operator's steady
// one, or DUMPLAG_GOGC (a collection less often shows what the collections cost the lag).
func dumpLagGCPercent(b *testing.B) int {
	s := os.Getenv("DUMPLAG_GOGC")
	if s == "" {
		return memlimit.DefaultSteadyGCPercent
	}
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		b.Fatalf("DUMPLAG_GOGC=%q: want a positive GC percent", s)
	}
	return v
}

// dumpLagRounds is how many windows each case runs: DUMPLAG_ROUNDS, 3 by default.
func dumpLagRounds(b *testing.B) int {
	if s := os.Getenv("DUMPLAG_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("DUMPLAG_ROUNDS=%q: want a count of at least 1", s)
		}
		return n
	}
	return 3
}

// scrapeSample is one read of the pod update counter: the middle of the read and the value.
type scrapeSample struct {
	at    time.Time
	value float64
}

// podUpdates is the line of the pod updates' counter in the text format.
const podUpdates = `multicache_events_total{kind="Pod",op="update",result="ok"} `

// eventsScraper returns bench-e2e's lag probe: a read of
// /metrics?name[]=multicache_events_total every 2 ms, as the operator's metrics server
// answers it (metrics.Served over a registry with the Go and process collectors), by an
// HTTP client that keeps its connection, until ctx is done; it returns the pod update
// counter of each read.
func eventsScraper(b *testing.B) func(context.Context) []scrapeSample {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	served := mcmetrics.NewServed(reg)
	if err := mcmetrics.Register(served); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(served.Handler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	b.Cleanup(srv.Close)
	url := srv.URL + "/metrics?name[]=multicache_events_total"
	return func(ctx context.Context) (samples []scrapeSample) {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				b.Error(err)
				return samples
			}
			sent := time.Now()
			if resp, err := srv.Client().Do(req); err == nil {
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if _, after, ok := strings.Cut(string(body), podUpdates); ok && err == nil {
					line, _, _ := strings.Cut(after, "\n")
					v, err := strconv.ParseFloat(line, 64)
					if err != nil {
						b.Errorf("the pod update counter reads %q: %v", line, err)
						return samples
					}
					samples = append(samples, scrapeSample{at: sent.Add(time.Since(sent) / 2), value: v})
				}
			}
			select {
			case <-ctx.Done():
				return samples
			case <-tick.C:
			}
		}
	}
}

// httpDumper serves write as the debug server serves WriteDump and returns a dump that GETs
// it and reads the body to the end.
func httpDumper(b *testing.B, write func(context.Context, io.Writer) error) func(context.Context) error {
	return httpDumperReading(b, write, func(body io.Reader) error {
		_, err := io.Copy(io.Discard, body)
		return err
	})
}

// slowHTTPDumper is httpDumper with a client that reads 64 KiB every 4 ms (16 MiB/s: a
// dump at 150,000 pods, 27 MB, takes it 1.6 s to read).
func slowHTTPDumper(b *testing.B, write func(context.Context, io.Writer) error) func(context.Context) error {
	return httpDumperReading(b, write, func(body io.Reader) error {
		buf := make([]byte, 64<<10)
		for {
			if _, err := io.ReadFull(body, buf); err != nil {
				if err == io.EOF || err == io.ErrUnexpectedEOF {
					return nil
				}
				return err
			}
			time.Sleep(4 * time.Millisecond)
		}
	})
}

// httpDumperReading serves write over HTTP and returns a dump that GETs it and reads the
// body with read.
func httpDumperReading(b *testing.B, write func(context.Context, io.Writer) error, read func(io.Reader) error) func(context.Context) error {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = write(r.Context(), w)
	}))
	b.Cleanup(srv.Close)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return err
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return read(resp.Body)
	}
}

// dumpLagRun is what one window measured: per update, the lag (due to applied), the apply
// (Sync) and the wake (due to the updater running again); the dumps completed.
type dumpLagRun struct {
	lags, applies, wakes []time.Duration
	// seen is, when the counter is read, from the moment the update was due to the middle
	// of the first read that showed it (bench-e2e's lag).
	seen     []time.Duration
	dumps    int
	counters dumpLagCounters
}

func (r *dumpLagRun) add(o dumpLagRun, c dumpLagCounters) {
	r.lags = append(r.lags, o.lags...)
	r.applies = append(r.applies, o.applies...)
	r.wakes = append(r.wakes, o.wakes...)
	r.seen = append(r.seen, o.seen...)
	r.dumps += o.dumps
	r.counters = r.counters.plus(c)
}

// dumpLag updates pod's labels at dumpLagRate for window while dump (when not nil) runs back
// to back.
func dumpLag(b *testing.B, h *Handler, pod *corev1.Pod, window time.Duration, dump func(context.Context) error,
	scrape func(context.Context) []scrapeSample, name string) (r dumpLagRun) {
	if prefix := os.Getenv("DUMPLAG_TRACE"); prefix != "" {
		f, err := os.Create(fmt.Sprintf("%s-%s.trace", prefix, name))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			b.Fatal(err)
		}
		defer trace.Stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var samples []scrapeSample
	var counted dto.Metric
	if err := okCounters[kindOp{stores.KindPod, stores.OpUpdate}].Write(&counted); err != nil {
		b.Fatal(err)
	}
	base := counted.GetCounter().GetValue()
	if scrape != nil {
		wg.Go(func() { samples = scrape(ctx) })
	}
	if dump != nil {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := dump(ctx); err != nil {
					if ctx.Err() == nil {
						b.Error(err)
					}
					return
				}
				r.dumps++
			}
		})
		time.Sleep(100 * time.Millisecond) // into the first dump
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	var dues []time.Time
	interval := time.Second / dumpLagRate
	start := time.Now()
	for i := 1; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) > window {
			break
		}
		next := pod.DeepCopy()
		next.Labels["churn"] = fmt.Sprint(i)
		// Newer than every update of the windows before: an older one changes nothing.
		next.ResourceVersion = fmt.Sprint(dumpLagVersion.Add(1))
		time.Sleep(time.Until(due))
		begin := time.Now()
		if err := h.Sync(key, next, true, Current); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		dues = append(dues, due)
		r.lags = append(r.lags, end.Sub(due))
		r.applies = append(r.applies, end.Sub(begin))
		r.wakes = append(r.wakes, begin.Sub(due))
	}
	// A read after the last update: the reads take milliseconds, more while a verify pass or
	// a dump shares the two CPUs (10 ms was too short for verify-scraped on a loaded machine).
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	if scrape != nil {
		// The i-th update is seen by the first read whose counter grew by i, as bench-e2e
		// matches them.
		j := 0
		for i, due := range dues {
			for j < len(samples) && samples[j].value-base < float64(i+1) {
				j++
			}
			if j == len(samples) {
				b.Fatalf("%s: update %d of %d never read", name, i+1, len(dues))
			}
			r.seen = append(r.seen, max(0, samples[j].at.Sub(due)))
		}
	}
	return r
}

// dumpLagVersion is the resource version of the last label update.
var dumpLagVersion atomic.Int64

func init() { dumpLagVersion.Store(1000) }

// dumpLagCounters are the process's counters a window's attribution is read from.
type dumpLagCounters struct {
	gcs     uint64
	gcPause time.Duration // stop-the-world
	assist  time.Duration // CPU the mutators spent assisting the GC
	// osWait is the threads' wait on the OS's run queue: of the threads alive at the end, by
	// thread ID (one that ended meanwhile is not counted).
	osWait  time.Duration
	threads map[int]time.Duration
	cpu     time.Duration // the process's CPU (user and system)
}

// minus is what the counters grew by since o.
func (c dumpLagCounters) minus(o dumpLagCounters) dumpLagCounters {
	d := dumpLagCounters{gcs: c.gcs - o.gcs, gcPause: c.gcPause - o.gcPause, assist: c.assist - o.assist, cpu: c.cpu - o.cpu}
	for tid, wait := range c.threads {
		d.osWait += wait - o.threads[tid]
	}
	return d
}

func (c dumpLagCounters) plus(o dumpLagCounters) dumpLagCounters {
	return dumpLagCounters{gcs: c.gcs + o.gcs, gcPause: c.gcPause + o.gcPause, assist: c.assist + o.assist, osWait: c.osWait + o.osWait, cpu: c.cpu + o.cpu}
}

func readDumpLagCounters() dumpLagCounters {
	samples := []metrics.Sample{
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/pauses/total/gc:seconds"},
		{Name: "/cpu/classes/gc/mark/assist:cpu-seconds"},
	}
	metrics.Read(samples)
	c := dumpLagCounters{gcs: samples[0].Value.Uint64()}
	hist := samples[1].Value.Float64Histogram()
	for i, n := range hist.Counts {
		// Each pause at its bucket's lower bound.
		c.gcPause += time.Duration(float64(n) * max(hist.Buckets[i], 0) * 1e9)
	}
	c.assist = time.Duration(samples[2].Value.Float64() * 1e9)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		c.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// The second field of /proc/<pid>/task/<tid>/schedstat: ns waited on a run queue.
	c.threads = map[int]time.Duration{}
	tasks, _ := filepath.Glob("/proc/self/task/*/schedstat")
	for _, t := range tasks {
		tid, err := strconv.Atoi(filepath.Base(filepath.Dir(t)))
		if err != nil {
			continue
		}
		if data, err := os.ReadFile(t); err == nil {
			var run, wait int64
			if _, err := fmt.Sscan(string(data), &run, &wait); err == nil {
				c.threads[tid] = time.Duration(wait)
			}
		}
	}
	return c
}

// reportLags reports the p50, p99 and max of d in microseconds.
func reportLags(b *testing.B, name string, d []time.Duration) {
	d = slices.Clone(d)
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), name+"-p50-us")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), name+"-p99-us")
	b.ReportMetric(float64(d[len(d)-1].Microseconds()), name+"-max-us")
}
