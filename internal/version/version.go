// Package version is the version of multicache, stamped into the binary at build time:
//
//	go build -ldflags "-X github.com/seed0f91f25e/multicache/internal/version.Version=v0.1.0" .
//
// `make build`, `make run` and `make docker-build` stamp the output of
// `git describe --tags --always --dirty`. A binary built without the stamp reports the
// version of its main module (set by `go install ...@v0.1.0`), else DevVersion.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set at link time with -X; empty means "not stamped".
var Version = ""

// DevVersion is reported by a binary built without a stamp from a checkout.
const DevVersion = "v0.0.0-dev"

// readBuildInfo is debug.ReadBuildInfo, replaced in tests.
var readBuildInfo = debug.ReadBuildInfo

// Get returns the version of this binary: the stamp, else the main module's version, else
// DevVersion. Characters that may not appear in a version (anything but letters, digits and
// ".+-_") are replaced with "_", so that the result is always safe in a header or a label.
func Get() string {
	v := strings.TrimSpace(Version)
	if v == "" {
		if info, ok := readBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" {
		return DevVersion
	}
	return sanitize(v)
}

// UserAgent is the User-Agent multicache sends to the API server:
// "multicache/<version> (<os>/<arch>)".
func UserAgent() string {
	return userAgent(Get(), runtime.GOOS, runtime.GOARCH)
}

func userAgent(version, goos, goarch string) string {
	return fmt.Sprintf("multicache/%s (%s/%s)", version, goos, goarch)
}

// String is what `multicache --version` prints.
func String() string {
	return fmt.Sprintf("multicache %s %s %s/%s", Get(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func sanitize(v string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(".+-_", r):
			return r
		}
		return '_'
	}, v)
}
