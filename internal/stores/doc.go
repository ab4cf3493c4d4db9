// Package stores is the internal side of the store contract: the CacheHandler every built-in
// store receives (it implements the public store.Handle, plus the lock and the wiring the
// handler and the built-in stores use), the Outbox through which stores ask instead of
// calling the handler, the fan-out order, kinds and operations, and EventError. The contract itself (Store, the event interfaces) and the
// vocabulary (NodeInfo, Resources, Owner, PodStatus, generations, the Err* reasons) are
// defined once, in the public package pkg/multicache/store, and the built-in stores use them
// from there, so that a store written out of tree and a built-in one implement the same
// definitions. Each built-in store
// lives in its own sub-package.
package stores
