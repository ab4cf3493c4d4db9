// Command multicache-zones is multicache built out of tree with one more store (pods per
// topology zone, zonestore) and one more sibling controller (zonewatch). It has every flag
// of multicache; --stores also knows "zones".
package main

import (
	"os"

	"github.com/seed0f91f25e/multicache/examples/out-of-tree/zonestore"
	"github.com/seed0f91f25e/multicache/examples/out-of-tree/zonewatch"
	"github.com/seed0f91f25e/multicache/pkg/multicache"
)

func main() {
	os.Exit(newCommand().Run(os.Args[1:]))
}

// newCommand is multicache with the zones store and its watcher.
func newCommand() *multicache.Command {
	return multicache.NewCommand(
		multicache.WithStore(zonestore.Name, zonestore.New),
		multicache.WithSibling(zonewatch.New),
	)
}
