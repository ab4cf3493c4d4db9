// Package debug serves the cache's debug endpoints (localhost by default):
//
//	GET /debug/cache                the JSON dump of every store
//	GET /debug/cache/nodes/{name}   one node: its merged info, pods, reservations and DRA devices
//	GET /debug/cache/compare        differences between the cache and the API (empty when consistent)
//	/debug/pprof/                   the Go profiler
package debug

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/seed0f91f25e/multicache/internal/drift"
	"github.com/seed0f91f25e/multicache/internal/handler"
	"github.com/seed0f91f25e/multicache/internal/stores/nodestore"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// Server is the debug HTTP server, run by the manager on every replica.
type Server struct {
	addr    string
	handler *handler.Handler
	api     client.Reader
	log     logr.Logger
	// Keep filters API objects out of the comparison the way the feeds do (sub-cluster).
	keep drift.KeepFunc
	// Listings are what the comparison lists; nil means drift.Listings. Set before the
	// server starts.
	Listings []drift.Listing
	// Source, when set, is what the comparison lists the API through (a shard lists its
	// nodes' pods node by node); nil means every object through the uncached reader.
	Source drift.Source
	// DumpWriteTimeout bounds how long one write of a dump waits for its client to read
	// (DefaultDumpWriteTimeout when not positive): past it the dump ends and the next client
	// may have one. Set before the server starts.
	DumpWriteTimeout time.Duration
	// dumps and compares let one dump and one comparison run at a time.
	dumps, compares turn
	// timeouts are the HTTP server's; hosts the Host headers it answers.
	timeouts timeouts
	hosts    hostCheck
}

// NewServer returns a server for addr that reads the cache from h and the API through api
// (a direct, uncached reader: the comparison must see what the API holds now).
func NewServer(addr string, h *handler.Handler, api client.Reader, keep drift.KeepFunc, log logr.Logger) *Server {
	return &Server{
		addr: addr, handler: h, api: api, keep: keep, log: log,
		dumps: turn{what: "a dump of the cache is being written to another client; one is written at a time"},
		compares: turn{what: "a comparison of the cache with the API is under way for another client; " +
			"one runs at a time (each lists the whole cluster)"},
		timeouts: defaultTimeouts,
		hosts:    newHostCheck(addr),
	}
}

// Handler returns the routes, behind the Host check (see hostCheck).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/cache", s.dump)
	mux.HandleFunc("GET /debug/cache/nodes/{name}", s.node)
	mux.HandleFunc("GET /debug/cache/compare", s.compare)
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", boundSeconds(pprof.Profile))
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", boundSeconds(pprof.Trace))
	return s.hosts.wrap(mux)
}

// Runnable binds the server's address and returns it as controller-runtime's HTTP server
// runnable: the manager starts those before its caches, so the endpoints (the profiler
// above all) answer while the informers fill, and every replica serves, leading or not.
func (s *Server) Runnable() (*manager.Server, error) {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-bind-address %q: %w", s.addr, err)
	}
	s.log.Info("debug endpoints bound; served once the manager starts", "address", ln.Addr().String())
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		s.log.Info("warning: the debug server listens beyond the loopback interface: whoever reaches it can read the whole cache, "+
			"make it list the whole cluster and profile the process, without authentication; "+
			"bind it to 127.0.0.1 and reach it through kubectl port-forward (kubectl multicache does)",
			"flag", "--debug-bind-address", "address", ln.Addr().String(), "acceptedHosts", s.hosts.String())
	}
	shutdown := 5 * time.Second
	return &manager.Server{
		Name:            "debug",
		Server:          s.timeouts.server(s.Handler()),
		Listener:        ln,
		ShutdownTimeout: &shutdown,
	}, nil
}

// NodeView is one node's debug view.
type NodeView struct {
	Name string `json:"name"`
	nodestore.NodeDump
	Reservations []ReservationRef `json:"reservationsOnNode"`
	// Devices are the node's DRA devices: total, allocated and free, by DeviceClass and by
	// pool. Absent when the devices store is off or no resource pool reaches the node.
	Devices *store.NodeDevices `json:"devices,omitempty"`
}

// ReservationRef is a reservation on a node.
type ReservationRef struct {
	Key   string `json:"key"`
	Phase string `json:"phase"`
	Owner string `json:"owner,omitempty"`
}

// dump streams the cache's dump (handler.WriteDump): the status is sent before the cache is
// read, so an error past that point ends the response early, and is logged. One dump is
// written at a time: each keeps a CPU busy half the time it runs (at 150,000 pods, seconds),
// and that CPU is what events wait for on a busy machine; a second client is answered 429
// with a Retry-After. A client that stops reading without closing its connection would hold
// that turn until the connection dies: each write waits at most DumpWriteTimeout for it.
func (s *Server) dump(w http.ResponseWriter, r *http.Request) {
	layout, err := dumpLayout(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	start := time.Now()
	if !s.dumps.take(w, start) {
		return
	}
	timeout := s.DumpWriteTimeout
	if timeout <= 0 {
		timeout = DefaultDumpWriteTimeout
	}
	err = func() error {
		defer s.dumps.done(start)
		return s.writeDump(w, r, layout, timeout)
	}()
	// Logged once the next client may have a dump.
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.log.Info("a dump's client read nothing for the write timeout; the dump ended so that another client may have one",
			"client", r.RemoteAddr, "writeTimeout", timeout.String(), "took", time.Since(start).String())
	case err != nil:
		s.log.Info("the cache's dump ended early", "client", r.RemoteAddr, "error", err.Error())
	}
}

// writeDump writes the dump of a client that has the turn.
func (s *Server) writeDump(w http.ResponseWriter, r *http.Request, layout handler.DumpLayout, timeout time.Duration) error {
	out := io.Writer(w)
	dw := &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
	if err := dw.rc.SetWriteDeadline(time.Now().Add(timeout)); err == nil {
		out = dw
	} else {
		// Every net/http server's writer supports deadlines; another (a recorder) goes without.
		s.log.V(1).Info("the dump's writer takes no write deadline; a client that stops reading holds the dump", "error", err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	// The deadline is the response's (http.ResponseController): net/http does not keep it
	// for the next request on the connection.
	return s.handler.WriteDump(r.Context(), out, layout)
}

func (s *Server) node(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	info, ok := s.handler.NodeInfo(name)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "node " + name + " is not in the cache"})
		return
	}
	v := NodeView{Name: name, NodeDump: nodestore.DumpNode(info), Reservations: []ReservationRef{}}
	for _, rv := range s.handler.ReservationsOnNode(name) {
		v.Reservations = append(v.Reservations, reservationRef(rv))
	}
	if d, ok := s.handler.NodeDevices(name); ok {
		v.Devices = &d
	}
	writeJSON(w, http.StatusOK, v)
}

func reservationRef(v store.Reservation) ReservationRef {
	ref := ReservationRef{Key: v.Key.String(), Phase: string(v.Phase)}
	if v.Owner != nil {
		ref.Owner = v.Owner.Namespace + "/" + v.Owner.Name
	}
	return ref
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
