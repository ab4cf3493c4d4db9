package debug

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxProfileSeconds bounds the seconds= of /debug/pprof/profile and /debug/pprof/trace: a
// profile holds the process's only CPU profiler (a trace its only tracer) and a connection
// for that long.
const MaxProfileSeconds = 60

// timeouts are the debug server's HTTP timeouts.
type timeouts struct {
	// readHeader bounds reading a request's headers; read reading the whole request (the
	// endpoints take no body, but for pprof's symbol POST).
	readHeader, read time.Duration
	// (net/http lifts the read deadline once a request without a body has been read, so
	// that the handler's context outlives it.)
	// write bounds writing a response, counted from the end of its request. The endpoints
	// that run longer set their own: the dump pushes its deadline before each write (a
	// client that stops reading loses it after DumpWriteTimeout), the comparison counts it
	// from the end of its listing, and pprof's profile and trace add their seconds.
	write time.Duration
	// idle bounds how long a kept-alive connection waits for its next request.
	idle time.Duration
}

// defaultTimeouts are the debug server's timeouts.
var defaultTimeouts = timeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: 30 * time.Second, idle: 2 * time.Minute}

// server returns the HTTP server of h with these timeouts.
func (t timeouts) server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.readHeader, ReadTimeout: t.read, WriteTimeout: t.write, IdleTimeout: t.idle}
}

// boundSeconds answers 400 to a profile or trace whose seconds= is not a positive number or
// is more than MaxProfileSeconds, and hands the others to next (pprof, which extends the
// write deadline by the seconds).
func boundSeconds(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v := r.FormValue("seconds"); v != "" {
			sec, err := strconv.ParseFloat(v, 64)
			switch {
			case err != nil || sec <= 0:
				writeJSON(w, http.StatusBadRequest, map[string]string{
					"error": fmt.Sprintf("seconds=%q is not a positive number of seconds: use e.g. seconds=30 (at most %d)", v, MaxProfileSeconds)})
				return
			case sec > MaxProfileSeconds:
				writeJSON(w, http.StatusBadRequest, map[string]string{
					"error": fmt.Sprintf("seconds=%s is more than the debug server's %d: profile or trace at most %d seconds at a time", v, MaxProfileSeconds, MaxProfileSeconds)})
				return
			}
		}
		next(w, r)
	}
}

// hostCheck answers 403 to a request whose Host header names a host the server was not
// bound as: a web page whose DNS name a browser was made to resolve to this machine
// (DNS rebinding) reaches a debug server bound to 127.0.0.1, or one behind a kubectl
// port-forward, with its own name in Host, and is refused. Accepted are localhost, any
// loopback IP, the host of --debug-bind-address and, when that binds every interface, the
// IPs of this machine's interfaces.
type hostCheck struct {
	// names are the accepted hosts besides loopback IPs, lower case, for the check and its
	// message.
	names []string
}

// newHostCheck returns the check of a server bound to addr (host:port).
func newHostCheck(addr string) hostCheck {
	c := hostCheck{names: []string{"localhost"}}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return c
	}
	host = strings.ToLower(host)
	ip := net.ParseIP(host)
	switch {
	case host == "" || (ip != nil && ip.IsUnspecified()):
		// Every interface: the IPs it is reached at (a pod's IP).
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
					c.names = append(c.names, n.IP.String())
				}
			}
		}
	case ip != nil && ip.IsLoopback(), host == "localhost":
	case ip != nil:
		c.names = append(c.names, ip.String())
	default:
		c.names = append(c.names, host)
	}
	return c
}

// accepts tells whether a request addressed to hostport (a Host header) is answered.
func (c hostCheck) accepts(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() {
			return true
		}
		host = ip.String()
	}
	return slices.Contains(c.names, host)
}

// String lists the accepted hosts, as the 403 names them.
func (c hostCheck) String() string {
	return strings.Join(append([]string{"127.0.0.1 (any loopback IP)", "::1"}, c.names...), ", ")
}

// wrap answers 403 to the requests c does not accept and hands the others to next.
func (c hostCheck) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.accepts(r.Host) {
			writeJSON(w, http.StatusForbidden, map[string]string{
				"error": fmt.Sprintf("the debug server does not answer requests for host %q: it accepts only %s "+
					"(a request addressed to another name may come from a web page through DNS rebinding); "+
					"use http://127.0.0.1:<port>, or kubectl port-forward and http://localhost:<port>", r.Host, c),
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}
