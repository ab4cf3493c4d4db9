package controlplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Process is a component of a local cluster running as a child process (the controller
// manager, the scheduler, the fake kubelets), its output in a log file.
type Process struct {
	Name string
	// Log is the file its output goes to.
	Log  string
	cmd  *exec.Cmd
	done chan error
}

// StartProcess starts bin with args, its stdout and stderr appended to logPath. It fails at
// once, naming bin, when bin is not an executable file or exits within the first half second
// (a bad flag, a port in use), with the tail of its log.
func StartProcess(name, bin string, args []string, logPath string) (*Process, error) {
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
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan error, 1)}
	go func() {
		p.done <- cmd.Wait()
		_ = out.Close()
	}()
	select {
	case err := <-p.done:
		p.done <- err
		return nil, fmt.Errorf("%s exited at start (%v); its log %s ends:\n%s", name, err, logPath, tail(logPath, 15))
	case <-time.After(500 * time.Millisecond):
	}
	return p, nil
}

// Stop sends an interrupt (SIGINT: every Kubernetes component stops on it as on SIGTERM), waits up to timeout, then kills.
func (p *Process) Stop(timeout time.Duration) error {
	if p == nil || p.cmd.Process == nil {
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

// tail returns the last n lines of a file ("" when it cannot be read).
func tail(path string, n int) string {
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
