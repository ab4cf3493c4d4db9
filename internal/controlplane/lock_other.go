//go:build !unix

package controlplane

import "os"

// tryLock does not lock where flock is missing: a second run fails later, on its ports.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) error { return nil }
