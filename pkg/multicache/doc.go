// Package multicache builds multicache in your own main, with your own stores and sibling
// controllers, the way kube-scheduler's app.NewSchedulerCommand(app.WithPlugin(...)) builds a
// scheduler with out-of-tree plugins:
//
//	func main() {
//		cmd := multicache.NewCommand(
//			multicache.WithStore("zones", zonestore.New),
//			multicache.WithSibling(zonewatch.New),
//		)
//		os.Exit(cmd.Run(os.Args[1:]))
//	}
//
// The binary gets every flag of multicache's own; --stores lists the registered stores and
// enables all of them by default. A store implements Store and the event interfaces of the
// kinds it cares about (PodHandler, NodeHandler, ... OwnerHandler): the handler subscribes it
// to exactly those kinds, applies every event to it under its one lock after validating it,
// in a fixed order (registered stores come after the built-in ones and before the PodStore),
// and includes it in snapshots (Snapshot.Part), the debug dump ("extensions"), the
// invariants the verify loop checks, and multicache_store_objects. A kind no enabled store
// handles is not watched at all.
//
// A sibling reads the cache in process: the Reader for the built-in stores, a snapshot (no
// lock while reading) or Cache.ReadStore for any store.
//
// docs/EXTENDING.md walks through examples/out-of-tree, a module that does all of this.
package multicache
