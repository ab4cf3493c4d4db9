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
		return nil, lockedError{dir: dir, pid: strings.TrimSpace(string(data))}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// lockedError says which process holds a directory and what to do; it is ErrLocked.
type lockedError struct{ dir, pid string }

func (e lockedError) Error() string {
	holder, kill := "another process", "it"
	if _, err := strconv.Atoi(e.pid); err == nil {
		holder, kill = "another multicache --local (pid "+e.pid+")", e.pid
	}
	return fmt.Sprintf("%s is running with %s: stop it first (Ctrl-C in its terminal, or kill %s); its kubeconfig %s still works meanwhile",
		holder, e.dir, kill, filepath.Join(e.dir, "kubeconfig"))
}

func (lockedError) Is(target error) bool { return target == ErrLocked }

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
