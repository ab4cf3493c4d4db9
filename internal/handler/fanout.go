package handler

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed0f91f25e/multicache/internal/metrics"
	"github.com/seed0f91f25e/multicache/internal/stores"
	"github.com/seed0f91f25e/multicache/pkg/multicache/store"
)

// subscriber is one store's handlers for one kind, with the metric observers resolved once.
type subscriber[T comparable] struct {
	store  stores.Name
	add    func(T)
	update func(oldObj, newObj T)
	del    func(T)
	// assume, when set, takes an assumption instead of add or update (store.PodAssumer).
	assume func(oldObj, newObj T)
	// observers of StoreOpDuration for add, update, delete.
	observe [3]prometheus.Observer
}

// newSubscriber subscribes a store's handlers; after, when set, runs once each returns
// (outboxAfter).
func newSubscriber[T comparable](name stores.Name, after func(), add func(T), update func(T, T), del func(T)) subscriber[T] {
	s := subscriber[T]{store: name, add: then1(add, after), update: then2(update, after), del: then1(del, after)}
	for i, op := range []stores.Op{stores.OpAdd, stores.OpUpdate, stores.OpDelete} {
		s.observe[i] = metrics.StoreOpDuration.WithLabelValues(string(name), string(op))
	}
	return s
}

// fanOut calls every subscriber in order for one event. An assumption (OpAssume) reaches a
// store that takes assumptions as such, and the others as an add (no old object) or an
// update. When timed, each store's time is observed (the handler samples one event in
// metrics.SampleEvery).
func fanOut[T comparable](subs []subscriber[T], op stores.Op, oldObj, newObj T, timed bool) {
	var none T
	for i := range subs {
		s := &subs[i]
		var start time.Time
		if timed {
			start = time.Now()
		}
		idx := 0
		switch {
		case op == stores.OpAssume && s.assume != nil:
			s.assume(oldObj, newObj)
		case op == stores.OpAdd, op == stores.OpAssume && oldObj == none:
			s.add(newObj)
		case op == stores.OpUpdate, op == stores.OpAssume:
			s.update(oldObj, newObj)
			idx = 1
		case op == stores.OpDelete:
			s.del(oldObj)
			idx = 2
		}
		if timed {
			s.observe[idx].Observe(time.Since(start).Seconds())
		}
	}
}

// plan validates an event against the last-seen objects and returns the object the stores
// are charged with (the old side of an update or delete). It changes nothing.
func (k *objectKind[K, T]) plan(op stores.Op, oldObj, newObj T) (K, T, error) {
	var zero T
	obj := newObj
	if op == stores.OpDelete {
		obj = oldObj
	}
	key := k.keyOf(obj)
	cur, exists := k.seen[key]
	switch op {
	case stores.OpAdd:
		if exists {
			return key, zero, store.ErrAlreadyExists
		}
		return key, zero, nil
	case stores.OpUpdate:
		if oldKey := k.keyOf(oldObj); oldKey != key {
			return key, zero, fmt.Errorf("%w: update from %v to %v", store.ErrInvalidObject, oldKey, key)
		}
	}
	if !exists {
		return key, zero, store.ErrNotFound
	}
	if uid, curUID := k.uidOf(obj), k.uidOf(cur); uid != "" && curUID != "" && uid != curUID {
		return key, zero, fmt.Errorf("%w: cache has %s, event has %s", store.ErrUIDMismatch, curUID, uid)
	}
	return key, cur, nil
}

// apply fans a planned event out and records the new last-seen object.
func (k *objectKind[K, T]) apply(op stores.Op, key K, charged, newObj T, timed bool) {
	if k.dispatch != nil {
		k.dispatch(op, key, charged, newObj, timed)
	} else {
		fanOut(k.subs, op, charged, newObj, timed)
	}
	if op == stores.OpDelete {
		delete(k.seen, key)
	} else {
		k.seen[key] = newObj
	}
}

// get returns the last-seen object of key.
func (k *objectKind[K, T]) get(key K) (T, bool) {
	obj, ok := k.seen[key]
	return obj, ok
}
