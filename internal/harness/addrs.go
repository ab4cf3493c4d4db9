package harness

import (
	"errors"
	"net"
	"strconv"
	"sync"
)

// OperatorAddrs are the localhost addresses a multicache operator process serves: its
// health probes, its metrics (plain HTTP) and its debug server (/debug/cache, pprof).
type OperatorAddrs struct {
	HealthAddr, MetricsAddr, DebugAddr string
}

// NewOperatorAddrs picks three free localhost ports (FreePort).
func NewOperatorAddrs() (OperatorAddrs, error) {
	var addrs [3]string
	for i := range addrs {
		port, err := FreePort()
		if err != nil {
			return OperatorAddrs{}, err
		}
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	return OperatorAddrs{HealthAddr: addrs[0], MetricsAddr: addrs[1], DebugAddr: addrs[2]}, nil
}

// Args are the operator's flags that bind the addresses.
func (a OperatorAddrs) Args() []string {
	return []string{
		"--health-probe-bind-address=" + a.HealthAddr,
		"--metrics-bind-address=" + a.MetricsAddr, "--metrics-secure=false",
		"--debug-bind-address=" + a.DebugAddr,
	}
}

// handedOut are the ports FreePort returned in this process: the kernel may hand a port
// that was just closed out again, and two flags of one program must not share one.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a localhost TCP port nobody listens on now, never the same twice.
func FreePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no free localhost port not already handed out")
}
