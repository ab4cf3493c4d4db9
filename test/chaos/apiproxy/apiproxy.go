// Package apiproxy is the chaos suite's path from one replica to the API server: a reverse
// proxy on a local plain-HTTP port that forwards every request with the API server's own
// credentials and TLS, and can break that path the way networks and loaded API servers do:
// a partition (requests and answers held, nothing reaches either side, until it heals), slow
// writes (a write waits before it is forwarded, as in a priority-and-fairness queue), and
// late delivery (what watches carry arrives late).
//
// It proxies HTTP rather than TCP so that it can tell a write from a read and a watch from
// a list; the replica speaks plain HTTP/1.1 to it, so each watch is a connection of its own.
package apiproxy

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Proxy forwards one replica's requests to the API server. Its faults are set and cleared
// while it runs; the zero state forwards everything at once.
type Proxy struct {
	srv *http.Server
	ln  net.Listener

	mu sync.Mutex
	// open is closed while the path is up; a partition replaces it with a new one.
	open       chan struct{}
	writeDelay time.Duration
	watchDelay time.Duration
}

// Start listens on a free local port and forwards to the API server cfg names, with cfg's
// credentials.
func Start(cfg *rest.Config) (*Proxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	if target.Scheme == "" {
		target.Scheme = "https"
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, open: make(chan struct{})}
	close(p.open)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches: every event as it comes
	rp.ModifyResponse = p.modifyResponse
	// Broken streams are what the faults make; the replicas' own logs tell their effect.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	// An upstream that fails (the API server restarting) breaks the client's connection, as
	// the API server's own refusal would, rather than answering 502.
	rp.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: time.Minute}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the address a replica's kubeconfig points at.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy and breaks every connection through it.
func (p *Proxy) Close() error {
	p.Heal()
	return p.srv.Close()
}

// Partition black-holes the path: requests already sent, answers on their way and new
// requests wait (the client's own timeouts run) until Heal.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default:
	}
}

// Heal ends a partition: what waited goes on.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// SlowWrites makes every write (POST, PUT, PATCH, DELETE) but the leader-election lease's
// wait d before it is forwarded (0: none). Leases are left alone as priority-and-fairness's
// leader-election level leaves them: a queue that delays them is a partition.
func (p *Proxy) SlowWrites(d time.Duration) {
	p.mu.Lock()
	p.writeDelay = d
	p.mu.Unlock()
}

// LateWatches delivers what every watch carries d after the API server sent it (0: at
// once), in order.
func (p *Proxy) LateWatches(d time.Duration) {
	p.mu.Lock()
	p.watchDelay = d
	p.mu.Unlock()
}

func (p *Proxy) state() (open chan struct{}, writeDelay, watchDelay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open, p.writeDelay, p.watchDelay
}

// wait waits until the path is up, or ctx is done.
func (p *Proxy) wait(ctx context.Context) error {
	for {
		open, _, _ := p.state()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-open:
		}
		// A new partition may have begun since open was read.
		if again, _, _ := p.state(); again == open {
			return nil
		}
	}
}

func (p *Proxy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := p.wait(r.Context()); err != nil {
			return // the client gave up; nothing reached the API server
		}
		if _, d, _ := p.state(); d > 0 && isWrite(r) {
			t := time.NewTimer(d)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
			if err := p.wait(r.Context()); err != nil {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// modifyResponse holds an answer while the path is down and makes a watch's body late.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	if err := p.wait(resp.Request.Context()); err != nil {
		return err
	}
	resp.Body = &heldBody{p: p, ctx: resp.Request.Context(), body: resp.Body, watch: resp.Request.URL.Query().Get("watch") == "true"}
	return nil
}

func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	// The leader-election lease: /apis/coordination.k8s.io/v1/namespaces/<ns>/leases/<name>.
	u := r.URL.Path
	const leases = "/apis/coordination.k8s.io/"
	return len(u) < len(leases) || u[:len(leases)] != leases
}

// heldBody passes an answer's body on while the path is up; a watch's chunks each wait
// until watchDelay after they arrived (read by a goroutine of its own, so that a late chunk
// does not make the next one later still).
type heldBody struct {
	p     *Proxy
	ctx   context.Context
	body  io.ReadCloser
	watch bool

	once   sync.Once
	chunks chan chunk
	rest   []byte
}

type chunk struct {
	data []byte
	due  time.Time
	err  error
}

func (b *heldBody) Read(out []byte) (int, error) {
	if !b.watch {
		n, err := b.body.Read(out)
		if werr := b.p.wait(b.ctx); werr != nil && err == nil {
			err = werr
		}
		return n, err
	}
	b.once.Do(func() {
		b.chunks = make(chan chunk, 4096)
		go b.readAhead()
	})
	if len(b.rest) == 0 {
		var c chunk
		select {
		case c = <-b.chunks:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-b.ctx.Done():
				t.Stop()
				return 0, b.ctx.Err()
			}
		}
		if err := b.p.wait(b.ctx); err != nil {
			return 0, err
		}
		if c.err != nil && len(c.data) == 0 {
			return 0, c.err
		}
		b.rest = c.data
	}
	n := copy(out, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *heldBody) readAhead() {
	for {
		buf := make([]byte, 32<<10)
		n, err := b.body.Read(buf)
		_, _, d := b.p.state()
		c := chunk{data: buf[:n], due: time.Now().Add(d), err: err}
		select {
		case b.chunks <- c:
		case <-b.ctx.Done():
			return
		}
		if err != nil {
			if n > 0 {
				// The error after the data.
				select {
				case b.chunks <- chunk{due: c.due, err: err}:
				case <-b.ctx.Done():
				}
			}
			return
		}
	}
}

func (b *heldBody) Close() error { return b.body.Close() }
