package harness

import (
	"bufio"
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
)

// Metrics are samples of the Prometheus text format, keyed by the series as written
// (name{label="value",...}), e.g. `scheduler_cache_size{type="pods"}`.
type Metrics map[string]float64

// Scrape reads the metrics at url whose names start with one of the prefixes (all of them
// when none is given), within RequestTimeout.
func Scrape(ctx context.Context, url string, prefixes ...string) (Metrics, error) {
	body, err := Get(ctx, url, RequestTimeout)
	if err != nil {
		return nil, err
	}
	return ParseMetrics(body, prefixes...), nil
}

// ParseMetrics reads the samples of a Prometheus text exposition whose metric name starts
// with one of the prefixes (all of them when none is given).
func ParseMetrics(data []byte, prefixes ...string) Metrics {
	m := Metrics{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || len(prefixes) > 0 && !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(line, p) }) {
			continue
		}
		// The value follows the first space after the labels; a timestamp may follow it.
		end := strings.LastIndexByte(line, '}')
		sp := strings.IndexByte(line[end+1:], ' ')
		if sp < 0 {
			continue
		}
		sp += end + 1
		fields := strings.Fields(line[sp:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		m[line[:sp]] = v
	}
	return m
}

// FilterURL asks a Prometheus handler for the named metric families only (client_golang's
// promhttp answers only those named by name[]; a handler without the filter answers all).
func FilterURL(url string, names ...string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "name[]=" + n
	}
	if len(q) == 0 {
		return url
	}
	return url + "?" + strings.Join(q, "&")
}

// Sum adds the samples of a metric whose labels contain every given `key="value"`.
func (m Metrics) Sum(name string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		base, _, _ := strings.Cut(k, "{")
		if base != name {
			continue
		}
		if !slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(k, l) }) {
			total += v
		}
	}
	return total
}

// ByLabel returns the samples of a metric by the value of one label.
func (m Metrics) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	prefix := name + "{"
	for k, v := range m {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		i := strings.Index(k, label+`="`)
		if i < 0 {
			continue
		}
		val := k[i+len(label)+2:]
		if j := strings.IndexByte(val, '"'); j >= 0 {
			val = val[:j]
		}
		out[val] += v
	}
	return out
}
