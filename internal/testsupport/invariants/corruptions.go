// Package invariants helps the stores' tests check their invariant checks. It is a package
// of its own, not part of testsupport, because a store's in-package test uses it and
// testsupport imports a store (podgroupstore): that test could not import testsupport.
package invariants

import (
	"strings"
	"testing"
)

// DeferredStore is a store whose check runs in two parts (stores.DeferredChecker).
type DeferredStore interface {
	CheckInvariants() []error
	CheckInvariantsDeferred() func() []error
}

// Corruption breaks one invariant of a healthy store and returns what puts it back.
type Corruption[S DeferredStore] struct {
	Name    string
	Corrupt func(s S) (restore func())
	// Want is in exactly one of the check's errors.
	Want string
	// Unique, when not empty, is in at most one of them.
	Unique string
}

// CheckCorruptions builds a healthy store with build for each corruption, corrupts it, runs
// the part of the check that runs under the handler's lock, restores the store and then
// runs the rest: what the check reads under the lock is what it judges, so each corruption
// is reported, once, and the restored store checks clean.
func CheckCorruptions[S DeferredStore](t *testing.T, build func(t *testing.T) S, corruptions []Corruption[S]) {
	t.Helper()
	for _, c := range corruptions {
		t.Run(c.Name, func(t *testing.T) {
			s := build(t)
			if errs := s.CheckInvariants(); len(errs) > 0 {
				t.Fatalf("healthy store: %v", errs)
			}
			restore := c.Corrupt(s)
			finish := s.CheckInvariantsDeferred()
			restore()
			errs := finish()
			if n := containing(errs, c.Want); n != 1 {
				t.Errorf("errors %v: %d contain %q, want 1", errs, n, c.Want)
			}
			if c.Unique != "" && containing(errs, c.Unique) > 1 {
				t.Errorf("errors %v: more than one contains %q", errs, c.Unique)
			}
			if errs := s.CheckInvariants(); len(errs) > 0 {
				t.Errorf("restored store: %v", errs)
			}
		})
	}
}

func containing(errs []error, s string) int {
	n := 0
	for _, err := range errs {
		if strings.Contains(err.Error(), s) {
			n++
		}
	}
	return n
}
