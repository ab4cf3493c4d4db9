package e2e

import (
	"fmt"
	"os"
	"os/exec"
)

// GoBuild builds the package pkg of the module in dir into out with the go command on PATH.
func GoBuild(dir, pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -o %s %s (in %s): %w", out, pkg, dir, err)
	}
	return nil
}
