//go:build !linux

package handler

// atLowPriority runs fn: only Linux gives a thread a nice value of its own.
func atLowPriority(fn func() error) error { return fn() }
