package harness

import "strconv"

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
