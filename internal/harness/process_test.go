package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcess_LogsItsOutputAndStopsOnSIGTERM(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p, err := StartProcess("/bin/sh", []string{"-c", `echo "$GREETING"; exec sleep 60`}, []string{"GREETING=hello"}, log)
	if err != nil {
		t.Skip(err)
	}
	if done, _ := p.Exited(); done {
		t.Fatal("exited at once")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ := os.ReadFile(log)
		if strings.Contains(string(data), "hello") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %q, want hello", data)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	p.Stop(10 * time.Second)
	if done, err := p.Exited(); !done || err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("after Stop: exited %v (%v) in %v, want ended by SIGTERM at once", done, err, time.Since(start))
	}
}
