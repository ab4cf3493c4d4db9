package chaos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed0f91f25e/multicache/internal/controlplane"
	"github.com/seed0f91f25e/multicache/internal/harness"
	"github.com/seed0f91f25e/multicache/test/chaos/apiproxy"
)

// Exit is one end of a replica's process.
type Exit struct {
	At          time.Time
	Incarnation int
	// How: "exit status 1", "signal: killed", ...
	How string
	// Expected is set when the suite killed it.
	Expected bool
	// Reason is the last error line of its log (e.g. "leader election lost").
	Reason string
}

// Replica is one operator process, restarted like a kubelet would when it exits on its
// own.
type Replica struct {
	Name string
	harness.OperatorAddrs
	// Proxy is the replica's path to the API server.
	Proxy *apiproxy.Proxy

	bin  string
	args []string
	dir  string
	logf func(string, ...any)

	mu          sync.Mutex
	proc        *controlplane.Process
	done        chan struct{} // closed once the exit of proc is recorded
	incarnation int
	started     time.Time
	paused      bool
	expectExit  bool
	closed      bool
	exits       []Exit
	logs        []string
}

// NewReplica prepares a replica with three fixed local addresses (kept across restarts).
func NewReplica(name, bin, dir string, args []string, logf func(string, ...any)) (*Replica, error) {
	addrs, err := harness.NewOperatorAddrs()
	if err != nil {
		return nil, err
	}
	r := &Replica{Name: name, OperatorAddrs: addrs, bin: bin, dir: dir, logf: logf}
	r.args = append(append(addrs.Args(), "--chaos-replica="+name, "--chaos-write-log="+r.WriteLog()), args...)
	return r, nil
}

// WriteLog is the path of the replica's write log (all incarnations).
func (r *Replica) WriteLog() string { return filepath.Join(r.dir, r.Name+".writes.jsonl") }

// Start starts a new incarnation.
func (r *Replica) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.startLocked()
}

func (r *Replica) startLocked() error {
	if r.closed {
		return fmt.Errorf("replica %s is shut down", r.Name)
	}
	if r.proc != nil {
		return fmt.Errorf("replica %s is running", r.Name)
	}
	r.incarnation++
	path := filepath.Join(r.dir, fmt.Sprintf("%s.%02d.log", r.Name, r.incarnation))
	p, err := controlplane.StartProcess(r.Name, r.bin, r.args, nil, path)
	if err != nil {
		return err
	}
	r.proc, r.done, r.started, r.paused, r.expectExit = p, make(chan struct{}), p.Started, false, false
	r.logs = append(r.logs, path)
	go r.wait(p, r.done, r.incarnation)
	return nil
}

// wait records the end of an incarnation and restarts the replica when it ended on its own.
func (r *Replica) wait(p *controlplane.Process, done chan struct{}, incarnation int) {
	<-p.Done()
	_, err := p.Exited()
	how := "exit status 0"
	if err != nil {
		how = err.Error()
	}
	r.mu.Lock()
	e := Exit{At: time.Now(), Incarnation: incarnation, How: how, Expected: r.expectExit || r.closed, Reason: lastError(p.Log)}
	r.exits = append(r.exits, e)
	r.proc = nil
	close(done)
	restart := !e.Expected
	r.mu.Unlock()
	if restart {
		r.logf("replica %s (incarnation %d) exited on its own: %s (%s); restarting it", r.Name, incarnation, how, e.Reason)
		time.Sleep(500 * time.Millisecond)
		r.mu.Lock()
		if r.proc == nil && !r.closed {
			if err := r.startLocked(); err != nil {
				r.logf("restarting %s: %v", r.Name, err)
			}
		}
		r.mu.Unlock()
	}
}

// Kill9 kills the process with SIGKILL and waits until it is gone.
func (r *Replica) Kill9() error {
	r.mu.Lock()
	p, done := r.proc, r.done
	if p == nil {
		r.mu.Unlock()
		return fmt.Errorf("replica %s is not running", r.Name)
	}
	r.expectExit = true
	err := p.Signal(syscall.SIGKILL)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	<-done
	return nil
}

// Pause stops the process with SIGSTOP; Resume continues it.
func (r *Replica) Pause() error { return r.signal(syscall.SIGSTOP, true) }

// Resume continues a paused process with SIGCONT.
func (r *Replica) Resume() error { return r.signal(syscall.SIGCONT, false) }

func (r *Replica) signal(sig syscall.Signal, paused bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return fmt.Errorf("replica %s is not running", r.Name)
	}
	r.paused = paused
	return r.proc.Signal(sig)
}

// Running reports whether a process runs (paused or not).
func (r *Replica) Running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc != nil && !r.paused
}

// Incarnation returns the current incarnation and when it started.
func (r *Replica) Incarnation() (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.incarnation, r.started
}

// Exits returns every end of the replica's processes so far.
func (r *Replica) Exits() []Exit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exit(nil), r.exits...)
}

// Logs returns the log files of every incarnation.
func (r *Replica) Logs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.logs...)
}

// Shutdown kills the process for good (test cleanup).
func (r *Replica) Shutdown() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	_ = r.Kill9()
}

// WaitReady waits up to bound until /readyz answers 200 (the cache caught up).
func (r *Replica) WaitReady(ctx context.Context, bound time.Duration) error {
	if !poll(bound, 100*time.Millisecond, func() bool {
		if ctx.Err() != nil {
			return true // given up: the caller's context is done
		}
		if !r.Running() {
			return false
		}
		_, err := harness.Get(ctx, "http://"+r.HealthAddr+"/readyz", 2*time.Second)
		return err == nil
	}) {
		return fmt.Errorf("replica %s not ready after %v", r.Name, bound)
	}
	return ctx.Err()
}

// lastError returns the message of the last error-level line of a log, if any.
func lastError(path string) string {
	lines := grepLogs([]string{path}, `"level":"error"`)
	if len(lines) == 0 {
		return ""
	}
	last := lines[len(lines)-1]
	msg := logField(last, "msg")
	if msg == "" {
		return last
	}
	if e := logField(last, "error"); e != "" {
		msg += ": " + e
	}
	return msg
}

// grepLogs returns the lines of the log files that contain s.
func grepLogs(paths []string, s string) []string {
	var out []string
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), s) {
				out = append(out, sc.Text())
			}
		}
		f.Close()
	}
	return out
}

// logField returns the string value of key in a JSON log line ("" without one).
func logField(line, key string) string {
	_, v, ok := strings.Cut(line, `"`+key+`":"`)
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, `"`)
	return v
}
