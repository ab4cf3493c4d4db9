package controlplane

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the child in a process group of its own: a Ctrl-C at the terminal
// reaches the operator, which stops its children in order, instead of every process at once.
// Should the operator die without stopping them (killed, a test binary's timeout), the
// kernel kills them with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
