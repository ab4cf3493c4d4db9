package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// stamp sets Version and the build info for one test.
func stamp(t *testing.T, version, moduleVersion string, hasInfo bool) {
	t.Helper()
	oldVersion, oldRead := Version, readBuildInfo
	t.Cleanup(func() { Version, readBuildInfo = oldVersion, oldRead })
	Version = version
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		if !hasInfo {
			return nil, false
		}
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/seed0f91f25e/multicache", Version: moduleVersion}}, true
	}
}

func TestGet_PrefersTheStampThenTheModuleVersion(t *testing.T) {
	for _, tc := range []struct {
		name, stamp, module string
		hasInfo             bool
		want                string
	}{
		{"stamped by make", "v0.3.1-4-gabcdef0-dirty", "(devel)", true, "v0.3.1-4-gabcdef0-dirty"},
		{"stamp wins over the module", "v0.3.1", "v0.2.0", true, "v0.3.1"},
		{"stamp is trimmed", "  v0.3.1\n", "", true, "v0.3.1"},
		{"go install @version", "", "v0.2.0", true, "v0.2.0"},
		{"go build in a checkout", "", "(devel)", true, DevVersion},
		{"no build info", "", "", false, DevVersion},
		{"blank stamp", "   ", "(devel)", true, DevVersion},
		{"bad characters are replaced", "v1 (2)/\"x\"\r\n3", "", true, "v1__2___x___3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stamp(t, tc.stamp, tc.module, tc.hasInfo)
			if got := Get(); got != tc.want {
				t.Errorf("Get() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUserAgent_NamesVersionOSAndArch(t *testing.T) {
	stamp(t, "v1.2.3", "", false)
	want := "multicache/v1.2.3 (" + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := UserAgent(); got != want {
		t.Errorf("UserAgent() = %q, want %q", got, want)
	}
	if got := userAgent("v0.0.0-dev", "linux", "arm64"); got != "multicache/v0.0.0-dev (linux/arm64)" {
		t.Errorf("userAgent = %q", got)
	}
	// Whatever the stamp, the header stays one line of visible characters.
	stamp(t, "v1\r\nX-Evil: 1", "", false)
	if ua := UserAgent(); strings.ContainsAny(ua, "\r\n:") {
		t.Errorf("UserAgent() = %q carries header-breaking characters", ua)
	}
}

func TestString_IsWhatVersionPrints(t *testing.T) {
	stamp(t, "v1.2.3", "", false)
	want := "multicache v1.2.3 " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	if got := String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
