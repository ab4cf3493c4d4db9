//go:build !race

package operator

// raceBuild is whether this test binary was built with the race detector.
const raceBuild = false
