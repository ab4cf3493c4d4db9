// Package store is the contract between multicache's cache handler and its stores, public so
// that a store written out of tree implements exactly what a built-in one does: the Store
// interface, the event interfaces of each kind (PodHandler ... ReservationHandler), the
// Handle every store is built with, and the vocabulary stores and readers share (NodeInfo,
// Resources, Owner, PodStatus, generations and versioned maps for incremental snapshots)
// and the views the built-in stores answer with, the same a multicache.Reader returns
// (PodGroup, PDB, Movement, Reservation, NodeDevices).
//
// It plays the part of kube-scheduler's framework package: public interfaces and value
// types, with the implementation (the handler, its lock, the pod state machine, the
// built-in stores) internal to multicache. The built-in stores use these definitions
// directly; nothing here depends on multicache's internal packages.
//
// A store is one idea with one owner. It declares its Name, implements the event interfaces
// of the kinds it cares about (and only those: the handler subscribes a store to a kind
// exactly when it implements that kind's interface, so nothing is called for nothing and a
// kind no enabled store handles is not even watched), takes part in snapshots, dumps itself
// as JSON and checks its own invariants.
//
// Event methods return nothing: the handler validates every event against its last-seen
// objects and the pod state machine before any store sees it, so a store is never asked to
// apply an event it cannot. All methods are called with the handler's lock held; the lock
// itself is never handed out.
package store
