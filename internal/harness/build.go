package harness

import (
	"fmt"
	"os/exec"
	"strings"
)

// GoBuild builds the package pkg of the module in dir into out with the go command on
// PATH, passing flags (e.g. -race) to go build.
func GoBuild(dir, pkg, out string, flags ...string) error {
	args := append(append([]string{"build", "-o", out}, flags...), pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, output)
	}
	return nil
}
