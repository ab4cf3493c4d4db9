//go:build !unix

package controlplane

import "os/exec"

// ownProcessGroup does nothing where process groups are not Unix's.
func ownProcessGroup(*exec.Cmd) {}
