package e2e

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APICost is what one subject's cold start cost the API server: the differences between a
// snapshot taken just before the subject's process started and one taken when it was full.
type APICost struct {
	// Window is the time between the two snapshots' CPU readings.
	Window time.Duration
	// APIServerCPU and EtcdCPU are the processes' CPU seconds (user and system) in the
	// window.
	APIServerCPU, EtcdCPU time.Duration
	// Mix is the requests by verb and resource, largest API server time first.
	Mix []RequestMix
	// IdleCores is the API server's CPU, in cores, over the pause before the start, when
	// no subject ran (its own informers, lease renewals and endpoint reconciles; -1 when
	// not measured).
	IdleCores float64
}

// NetAPIServerCPU is APIServerCPU less what the API server spends idle over the window:
// what the subject's start added (0 when the idle rate was not measured).
func (c APICost) NetAPIServerCPU() time.Duration {
	if c.IdleCores < 0 {
		return 0
	}
	return c.APIServerCPU - time.Duration(c.IdleCores*float64(c.Window))
}

// RequestMix is one verb on one resource in a cold start's window.
type RequestMix struct {
	// Verb is the API server's (LIST, GET, WATCH, POST, ...); Resource is written
	// resource[/subresource][.group], or "(non-resource)" for paths such as /api and /readyz.
	Verb, Resource string
	// Requests and Seconds are the requests that ended in the window
	// (apiserver_request_total) and the time the API server spent serving them
	// (apiserver_request_duration_seconds_sum). Watches are left out: one is counted when
	// it ends, and the subject's own are open until it is stopped (OpenWatches counts them).
	Requests int
	Seconds  float64
	// WatchEvents and WatchBytes are the events the API server sent on watches of the
	// resource, and their encoded size (apiserver_watch_events_total, _sizes): with
	// client-go's streaming lists, the initial list is sent that way. Bytes per event show
	// the encoding: a protobuf pod is about half the size of its JSON.
	WatchEvents int
	WatchBytes  float64
	// StreamedLists and StreamedListSeconds are the streaming lists whose initial events
	// were all sent in the window, and how long they took in all
	// (apiserver_watch_list_duration_seconds).
	StreamedLists       int
	StreamedListSeconds float64
	// OpenWatches is how many more watches were open on the resource at the end of the
	// window than at its start (apiserver_longrunning_requests{verb="WATCH"}; the API
	// server's own informers watch through it too).
	OpenWatches int
}

// BytesPerEvent is the mean encoded size of a watch event (0 without events).
func (r RequestMix) BytesPerEvent() float64 {
	if r.WatchEvents == 0 {
		return 0
	}
	return r.WatchBytes / float64(r.WatchEvents)
}

// NewAPICost returns the differences between two snapshots.
func NewAPICost(before, after APISnapshot) APICost {
	c := APICost{
		IdleCores:    -1,
		Window:       after.At.Sub(before.At),
		APIServerCPU: after.APIServerCPU - before.APIServerCPU,
		EtcdCPU:      after.EtcdCPU - before.EtcdCPU,
	}
	rows := map[[2]string]*RequestMix{}
	row := func(verb, resource string) *RequestMix {
		k := [2]string{verb, resource}
		if rows[k] == nil {
			rows[k] = &RequestMix{Verb: verb, Resource: resource}
		}
		return rows[k]
	}
	for key, v := range after.Metrics {
		name, labels := parseSeries(key)
		d := v - before.Metrics[key]
		if d <= 0 {
			continue
		}
		switch name {
		case "apiserver_longrunning_requests":
			if labels["verb"] == "WATCH" {
				row("WATCH", resourceOf(labels)).OpenWatches += int(d)
			}
		case "apiserver_request_total", "apiserver_request_duration_seconds_sum":
			if labels["verb"] == "WATCH" {
				// A watch that ends in the window is not the subject's (its own are open until
				// it is stopped): the API server's own informers re-open theirs every 5-10
				// minutes, and its duration is the watch's lifetime.
				continue
			}
			if r := row(labels["verb"], resourceOf(labels)); name == "apiserver_request_total" {
				r.Requests += int(d)
			} else {
				r.Seconds += d
			}
		case "apiserver_watch_events_total":
			row("WATCH", resourceOf(labels)).WatchEvents += int(d)
		case "apiserver_watch_events_sizes_sum":
			row("WATCH", resourceOf(labels)).WatchBytes += d
		case "apiserver_watch_list_duration_seconds_sum":
			row("WATCH", resourceOf(labels)).StreamedListSeconds += d
		case "apiserver_watch_list_duration_seconds_count":
			row("WATCH", resourceOf(labels)).StreamedLists += int(d)
		}
	}
	for _, r := range rows {
		c.Mix = append(c.Mix, *r)
	}
	slices.SortFunc(c.Mix, func(a, b RequestMix) int {
		if n := cmp.Compare(b.Seconds+b.StreamedListSeconds, a.Seconds+a.StreamedListSeconds); n != 0 {
			return n
		}
		if n := cmp.Compare(b.WatchEvents, a.WatchEvents); n != 0 {
			return n
		}
		return cmp.Compare(a.Verb+" "+a.Resource, b.Verb+" "+b.Resource)
	})
	return c
}

// Totals sums the mix: requests that ended, the time serving them, watch events, their
// bytes, and the open watches.
func (c APICost) Totals() (requests int, seconds float64, events int, eventBytes float64, watches int) {
	for _, r := range c.Mix {
		requests += r.Requests
		seconds += r.Seconds
		events += r.WatchEvents
		eventBytes += r.WatchBytes
		watches += r.OpenWatches
	}
	return
}

// Row returns the mix's row of verb on resource (a zero row when there is none).
func (c APICost) Row(verb, resource string) RequestMix {
	for _, r := range c.Mix {
		if r.Verb == verb && r.Resource == resource {
			return r
		}
	}
	return RequestMix{Verb: verb, Resource: resource}
}

// resourceOf writes a series' resource as resource[/subresource][.group]. Watch event
// series name the resource without a subresource label.
func resourceOf(labels map[string]string) string {
	r := labels["resource"]
	if r == "" {
		return "(non-resource)"
	}
	if s := labels["subresource"]; s != "" {
		r += "/" + s
	}
	if g := labels["group"]; g != "" {
		r += "." + g
	}
	return r
}

// parseSeries splits a series key as ParseMetrics writes it, name{a="x",b="y"}, into its
// name and labels. Label values are unquoted (Prometheus escapes \", \\ and \n as Go does).
func parseSeries(key string) (string, map[string]string) {
	name, rest, ok := strings.Cut(key, "{")
	if !ok {
		return key, nil
	}
	labels := map[string]string{}
	for {
		label, value, ok := strings.Cut(strings.TrimLeft(rest, ", "), "=")
		quoted, err := strconv.QuotedPrefix(value)
		if !ok || err != nil {
			return name, labels
		}
		labels[label], _ = strconv.Unquote(quoted)
		rest = value[len(quoted):]
	}
}
