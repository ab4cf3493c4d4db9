package controlplane

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestLockDir_ASecondHolderIsRefusedNamingTheFirst is a second `make run` while one runs:
// refused with the first one's pid, until the first releases the lock.
func TestLockDir_ASecondHolderIsRefusedNamingTheFirst(t *testing.T) {
	dir := t.TempDir() + "/.local"
	first, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second LockDir: %v, want ErrLocked", err)
	}
	for _, want := range []string{"pid " + strconv.Itoa(os.Getpid()), dir, "stop it first", dir + "/kubeconfig"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after Release: %v", err)
	}
	_ = again.Release()
}

func TestLockDir_AnUncreatableDirectoryIsAnError(t *testing.T) {
	file := t.TempDir() + "/file"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(file + "/sub"); err == nil || !strings.Contains(err.Error(), "creating") {
		t.Errorf("LockDir under a file: %v, want an error creating the directory", err)
	}
}
