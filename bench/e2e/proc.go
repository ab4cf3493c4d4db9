package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// Mem is a process's memory as the kernel counts it (/proc/<pid>/status).
type Mem struct {
	// RSS is the resident set now (VmRSS); HWM its peak since the start (VmHWM).
	RSS, HWM int64
}

// ReadMem reads VmRSS and VmHWM of pid, in bytes.
func ReadMem(pid int) (Mem, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	var m Mem
	for _, line := range strings.Split(string(data), "\n") {
		key, val, _ := strings.Cut(line, ":")
		dst := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM}[key]
		if dst == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("/proc/%d/status %s: %w", pid, key, err)
		}
		*dst = kb << 10
	}
	return m, nil
}

// procStat reads a /proc/<pid>/stat file: the command name (field 2, in parentheses; it
// may hold spaces) and the fields after it (fields[0] is field 3, the state).
func procStat(path string) (name string, fields []string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("%s: no command name", path)
	}
	return string(data[open+1 : end]), strings.Fields(string(data[end+1:])), nil
}

// ReadCPU reads the CPU time pid has used so far, user and system (utime + stime of
// /proc/<pid>/stat, fields 14 and 15; 10 ms resolution).
func ReadCPU(pid int) (time.Duration, error) {
	_, fields, err := procStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
