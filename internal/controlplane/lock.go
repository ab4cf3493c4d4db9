package controlplane

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the file in a --local directory that the running process holds locked.
const LockFile = "run.lock"

// ErrLocked is returned by LockDir when another process holds the directory.
var ErrLocked = errors.New("directory in use")

// Lock is a held directory lock; Release gives it up (the kernel also does when the process
// ends, however it ends, so a crashed run never leaves a stale lock).
type Lock struct{ f *os.File }

// LockDir takes an exclusive lock on dir (creating it) before anything in it is rewritten, so
// that a second `multicache --local` does not overwrite the kubeconfig of a running one. The
// lock file records the holder's process id, which the error of a second LockDir names.
func LockDir(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !held {
		data, _ := os.ReadFile(path)
		_ = f.Close()
		holder := "another process"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			holder = fmt.Sprintf("another multicache --local (pid %d)", pid)
		}
		return nil, fmt.Errorf("%w: %s is running with %s: stop it first (Ctrl-C in its terminal, or kill %s); "+
			"its kubeconfig %s still works meanwhile", ErrLocked, holder, dir, pidOf(data), filepath.Join(dir, "kubeconfig"))
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// pidOf renders the process id of a lock file for a kill command.
func pidOf(data []byte) string {
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
		return strconv.Itoa(pid)
	}
	return "it"
}

// Release gives the lock up. The lock file stays: removing it would race with a new holder.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
