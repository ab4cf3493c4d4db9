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
// enables all of them by default. A store implements the contract of package store (Store
// and the event interfaces of the kinds it cares about): the handler subscribes it to
// exactly those kinds, applies every event to it under its one lock after validating it, in
// a fixed order (registered stores come after the built-in ones and before the pod store),
// and includes it in snapshots (Snapshot.Part), the debug dump ("extensions"), the
// invariants the verify loop checks, and multicache_store_objects. A kind no enabled store
// handles is not watched at all.
//
// A sibling reads the cache in process through the Reader (copies under a read lock held
// only while copying) or a Snapshot (no lock while reading), and a scheduler assumes pods
// and claims' allocations through the Assumer, which goes through the cache's state
// machine. Like
// kube-scheduler's framework package, this package and package store export interfaces and
// value types of their own only: no lock, no event method and no internal type is
// reachable from them.
//
// docs/EXTENDING.md walks through examples/out-of-tree, a module that does all of this.
package multicache
