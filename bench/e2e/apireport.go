package e2e

import (
	"fmt"
	"slices"
	"strings"
)

// writeAPICosts reports what every cold start cost the API server and etcd: one line per
// run, then each subject's request mix, round by round.
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

	var subjects []string
	for _, c := range runs {
		if !slices.Contains(subjects, c.Subject) {
			subjects = append(subjects, c.Subject)
		}
	}
	p("\nRequest mix per subject (each cell: requests ended and the time serving them; watch events, their mean size, the streamed lists and their time, the watches open at full):\n")
	for _, s := range subjects {
		var mine []ColdStart
		for _, c := range runs {
			if c.Subject == s {
				mine = append(mine, c)
			}
		}
		var keys [][2]string
		for _, c := range mine {
			for _, r := range c.API.Mix {
				if k := [2]string{r.Verb, r.Resource}; !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		p("\n**%s**\n\n| verb | resource |", s)
		for _, c := range mine {
			p(" round %s |", roundName(c.Round))
		}
		p("\n|---|---|%s\n", strings.Repeat("---|", len(mine)))
		for _, k := range keys {
			p("| %s | %s |", k[0], k[1])
			for _, c := range mine {
				p(" %s |", mixCell(c.API.Row(k[0], k[1])))
			}
			p("\n")
		}
	}
}

// mixCell writes one row of a request mix in a table cell.
func mixCell(r RequestMix) string {
	var parts []string
	if r.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d req %.3f s", r.Requests, r.Seconds))
		if r.ResponseBytes > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" %.1f MiB", r.ResponseBytes/(1<<20))
		}
	}
	if r.WatchEvents > 0 {
		parts = append(parts, fmt.Sprintf("%d ev × %.0f B", r.WatchEvents, r.BytesPerEvent()))
	}
	if r.StreamedLists > 0 {
		parts = append(parts, fmt.Sprintf("%d list %.3f s", r.StreamedLists, r.StreamedListSeconds))
	}
	if r.OpenWatches > 0 {
		parts = append(parts, fmt.Sprintf("%d open", r.OpenWatches))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func roundName(round int) string {
	if round < 0 {
		return "warm-up"
	}
	return fmt.Sprint(round)
}
