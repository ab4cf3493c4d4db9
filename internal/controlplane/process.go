package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Process is a program running as a child process (a component of a local cluster, or a
// program under test), its output appended to a log file.
type Process struct {
	Name string
	// Log is the file its output goes to.
	Log string
	// Started is when it was started: the origin of a cold start's time.
	Started time.Time
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// StartProcess starts bin with args and extra environment variables (KEY=value), its stdout
// and stderr appended to logPath. It fails at once, naming bin, when bin is not an
// executable file.
func StartProcess(name, bin string, args, env []string, logPath string) (*Process, error) {
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%w: no executable %s for %s", ErrAssetsMissing, bin, name)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: opening its log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	ownProcessGroup(cmd)
	p := &Process{Name: name, Log: logPath, Started: time.Now(), cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	return p, nil
}

// Survives waits d and fails when the process exited meanwhile (a bad flag, a port in use),
// with the tail of its log.
func (p *Process) Survives(d time.Duration) error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited at start (%v); its log %s ends:\n%s", p.Name, p.err, p.Log, Tail(p.Log, 15))
	case <-time.After(d):
		return nil
	}
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, and how (nil: exit status 0).
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Signal sends sig to the process (a test's faults: SIGKILL, SIGSTOP, SIGCONT).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends an interrupt (SIGINT: every Kubernetes component, and multicache, stops on it
// as on SIGTERM), waits up to timeout, then kills.
func (p *Process) Stop(timeout time.Duration) error {
	if p == nil || p.cmd.Process == nil {
		return nil
	}
	if done, _ := p.Exited(); done {
		return nil
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("killing %s: %w", p.Name, err)
		}
		<-p.done
		return nil
	}
}

// Tail returns the last n lines of a file ("" when it cannot be read): a log's end, for
// errors.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' && i != len(b)-1 {
			lines++
			if lines == n {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
