// Package writelog records every request of a process that changes something in the API
// (one JSON line each) and reads such logs back. The chaos operator writes it; the chaos
// suite reads it to attribute status writes to replicas and to check them against the
// leader-election lease.
package writelog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// Entry is one line of the write log: a request that changes something, as the process
// sent it and as the API answered.
type Entry struct {
	// Time is when the answer arrived (Start lines: when the process started).
	Time    time.Time `json:"t"`
	Replica string    `json:"replica"`
	PID     int       `json:"pid"`
	// Start marks the first line of a process.
	Start  bool   `json:"start,omitempty"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Code is the HTTP status; 0 when the request failed without an answer.
	Code int    `json:"code,omitempty"`
	Err  string `json:"err,omitempty"`
	// Sent is when the request left.
	Sent time.Time `json:"sent,omitempty"`
	// RV is the resourceVersion of the object in the answer.
	RV string `json:"rv,omitempty"`
	// Holder is spec.holderIdentity of a Lease in the answer.
	Holder string `json:"holder,omitempty"`
}

// OK reports whether the API accepted the request.
func (e *Entry) OK() bool { return e.Code >= 200 && e.Code < 300 }

// Resource returns the resource the path names ("reservations", "leases", ...), its
// namespace, name and subresource.
func (e *Entry) Resource() (resource, namespace, name, sub string) {
	parts := strings.Split(strings.Trim(e.Path, "/"), "/")
	// /api/v1/... or /apis/group/version/...
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "", "", "", ""
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		namespace = parts[1]
		parts = parts[2:]
		if len(parts) == 0 {
			return "namespaces", "", namespace, ""
		}
	}
	if len(parts) > 0 {
		resource = parts[0]
	}
	if len(parts) > 1 {
		name = parts[1]
	}
	if len(parts) > 2 {
		sub = parts[2]
	}
	return resource, namespace, name, sub
}

// Log appends Entry lines to a file, one write(2) per line, so that a kill -9 loses at most
// the line of the request in flight.
type Log struct {
	mu      sync.Mutex
	f       *os.File
	replica string
	pid     int
}

// Open appends to path, starting with a Start line.
func Open(path, replica string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Log{f: f, replica: replica, pid: os.Getpid()}
	w.append(Entry{Time: time.Now(), Start: true})
	return w, nil
}

// Close closes the file.
func (w *Log) Close() error { return w.f.Close() }

func (w *Log) append(e Entry) {
	e.Replica, e.PID = w.replica, w.pid
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.f.Write(line)
}

// Wrap is a rest.Config WrapTransport: it logs every request but reads and watches.
func (w *Log) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return rt.RoundTrip(req)
		}
		sent := time.Now()
		resp, err := rt.RoundTrip(req)
		e := Entry{Method: req.Method, Path: req.URL.Path, Sent: sent}
		if err != nil {
			e.Time, e.Err = time.Now(), err.Error()
			w.append(e)
			return resp, err
		}
		e.Code = resp.StatusCode
		body, rerr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		e.Time = time.Now()
		if rerr == nil {
			describe(&e, body)
		}
		w.append(e)
		return resp, nil
	})
}

// describe fills in what the answer says about the object written: JSON (custom
// resources), or protobuf (the built-in kinds client-go sends that way: leases, events).
func describe(e *Entry, body []byte) {
	if len(body) > 4 && bytes.Equal(body[:4], []byte("k8s\x00")) {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
		if err != nil {
			return
		}
		if m, ok := obj.(metav1.Object); ok {
			e.RV = m.GetResourceVersion()
		}
		if l, ok := obj.(*coordinationv1.Lease); ok && l.Spec.HolderIdentity != nil {
			e.Holder = *l.Spec.HolderIdentity
		}
		return
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			HolderIdentity *string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return
	}
	e.RV = obj.Metadata.ResourceVersion
	if obj.Spec.HolderIdentity != nil && strings.Contains(e.Path, "/leases") {
		e.Holder = *obj.Spec.HolderIdentity
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Read returns the entries of a log file; a torn last line (kill -9) is skipped.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
