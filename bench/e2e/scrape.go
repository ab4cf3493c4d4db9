package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpClient reads the subjects' endpoints. kube-scheduler serves HTTPS with a self-signed
// certificate on localhost: it is not verified.
var httpClient = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 4}, //nolint:gosec // localhost, self-signed
}

// requestTimeout bounds a request to a subject; getSlow's callers pass their own.
const requestTimeout = 30 * time.Second

// get returns the body of url, or an error unless it answered 200 within requestTimeout.
func get(ctx context.Context, url string) ([]byte, error) {
	return getSlow(ctx, url, requestTimeout)
}

// getSlow is get with its own timeout, for requests that take long by design
// (/debug/cache/compare lists the whole cluster from the API; a CPU profile lasts its
// seconds).
func getSlow(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body)
	}
	return body, nil
}

// Metrics are samples of the Prometheus text format, keyed by the series as written
// (name{label="value",...}), e.g. `scheduler_cache_size{type="pods"}`.
type Metrics map[string]float64

// ParseMetrics reads the samples of a Prometheus text exposition whose metric name starts
// with one of the prefixes (all of them when none is given).
func ParseMetrics(data []byte, prefixes ...string) Metrics {
	m := Metrics{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !hasAnyPrefix(line, prefixes) {
			continue
		}
		// The value follows the last space outside the labels (no timestamps are written).
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

func hasAnyPrefix(s string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Get returns the value of the series written exactly as key, and whether it is there.
func (m Metrics) Get(key string) (float64, bool) {
	v, ok := m[key]
	return v, ok
}

// Scrape reads the metrics at url whose names start with one of the prefixes.
func Scrape(ctx context.Context, url string, prefixes ...string) (Metrics, error) {
	body, err := get(ctx, url)
	if err != nil {
		return nil, err
	}
	return ParseMetrics(body, prefixes...), nil
}

// HeapAfterGC asks a Go process's /debug/pprof/ (base is the URL up to and including
// /debug/pprof) for its heap profile after a collection (gc=1) and returns HeapAlloc then:
// the live heap plus what was allocated since the collection ended, a few KB.
func HeapAfterGC(ctx context.Context, base string) (int64, error) {
	body, err := get(ctx, base+"/heap?gc=1&debug=1")
	if err != nil {
		return 0, err
	}
	const key = "# HeapAlloc = "
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, fmt.Errorf("no HeapAlloc in %s/heap", base)
	}
	rest := body[i+len(key):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
}
