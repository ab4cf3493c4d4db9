// Command multicache-descheduler is multicache with one more sibling controller: lownode,
// a descheduler in the manner of the descheduler project's LowNodeUtilization. It has every
// flag of multicache, plus lownode's (--lownode-*).
package main

import (
	"os"

	"github.com/seed0f91f25e/multicache/examples/descheduler/lownode"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

func main() {
	os.Exit(newCommand().Run(os.Args[1:]))
}

// newCommand is multicache with the lownode descheduler.
func newCommand() *multicache.Command {
	return multicache.NewCommand(multicache.WithSiblingSettings(lownode.DefaultSettings(), lownode.New))
}
