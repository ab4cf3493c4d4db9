package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcess_LogsItsOutputAndStopsOnAnInterrupt(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p, err := StartProcess("sh", "/bin/sh", []string{"-c", `echo "$GREETING"; exec sleep 60`}, []string{"GREETING=hello"}, log)
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
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if done, err := p.Exited(); !done || err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("after Stop: exited %v (%v) in %v, want ended by the interrupt at once", done, err, time.Since(start))
	}
}

func TestProcess_SurvivesNamesAProcessThatExitedAtStartWithItsLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	p, err := StartProcess("sh", "/bin/sh", []string{"-c", "echo bad flag; exit 3"}, nil, log)
	if err != nil {
		t.Skip(err)
	}
	err = p.Survives(5 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "sh exited at start") || !strings.Contains(err.Error(), "bad flag") {
		t.Errorf("Survives: %v, want the exit and the log's tail", err)
	}
}
