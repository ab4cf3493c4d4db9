package e2e

import (
	"fmt"
	"slices"
)

// writeAPICosts reports what every cold start cost the API server and etcd, one line per
// run.
func writeAPICosts(p func(string, ...any), res *Result) {
	runs := append([]ColdStart{res.WarmUp}, res.ColdStarts...)
	runs = slices.DeleteFunc(runs, func(c ColdStart) bool { return c.API == nil })
	if len(runs) == 0 {
		return
	}
	p("\n### The API server during each cold start\n\n")
	p("From just before the subject's process starts to the poll that found it full: the CPU of kube-apiserver and etcd (`/proc/<pid>/stat`), ")
	p("and the differences of the API server's own metrics. Watches are left out of the requests (one is counted when it ends; the subject's own are open until it is stopped, and counted apart). ")
	p("With client-go's streaming lists (WatchListClient, on by default since 1.35, in every subject) the initial list is sent as watch events. ")
	p("Bytes per pod event show the encoding the client asked for: JSON is about 1.5 times protobuf's size. ")
	p("multicache's CRDs are served as JSON only.\n\n")
	p("The API server's idle CPU is measured over the pause before each start (no subject running); net of idle is its CPU less that rate times the window.\n\n")
	p("| round | subject | window (s) | API server CPU (s) | idle (cores) | net of idle (s) | etcd CPU (s) | requests ended | time serving them (s) | watch events | watch MiB | B / pod event | streamed lists (s) | open watches |\n")
	p("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range runs {
		a := c.API
		requests, seconds, events, eventBytes, watches := a.Totals()
		lists, listSeconds := 0, 0.0
		for _, r := range a.Mix {
			lists += r.StreamedLists
			listSeconds += r.StreamedListSeconds
		}
		p("| %s | %s | %.2f | %.2f | %.3f | %.2f | %.2f | %d | %.2f | %d | %.1f | %.0f | %d (%.2f) | %d |\n", roundName(c.Round), c.Subject,
			a.Window.Seconds(), a.APIServerCPU.Seconds(), a.IdleCores, a.NetAPIServerCPU().Seconds(), a.EtcdCPU.Seconds(),
			requests, seconds, events, eventBytes/(1<<20),
			a.Row("WATCH", "pods").BytesPerEvent(), lists, listSeconds, watches)
	}
}

func roundName(round int) string {
	if round < 0 {
		return "warm-up"
	}
	return fmt.Sprint(round)
}
