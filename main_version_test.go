package main

import (
	"fmt"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

const versionPackage = "github.com/seed0f91f25e/multicache/internal/version"

// TestBinary_VersionIsStampedAndSentAsUserAgent builds the operator with the version
// stamped as `make build` does, checks that --version prints it and exits 0, then runs it
// against the test API server through a proxy that records the User-Agent of every request.
func TestBinary_VersionIsStampedAndSentAsUserAgent(t *testing.T) {
	t.Parallel() // waits on processes; buildOperator is shared
	const stamped = "v9.8.7-test"
	bin := filepath.Join(t.TempDir(), "multicache")
	build := exec.Command("go", "build", "-o", bin, "-ldflags", "-X "+versionPackage+".Version="+stamped, ".")
	build.Dir = env.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	want := fmt.Sprintf("multicache %s %s %s/%s\n", stamped, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}

	proxy := newRecordingProxy(t, env.Config)
	probe := freeAddress(t)
	cmd, logs := startOperator(t, bin, "--kubeconfig="+proxy.kubeconfig(t),
		"--health-probe-bind-address="+probe, "--metrics-bind-address=0", "--debug-bind-address=0")
	waitReady(t, probe, logs)
	stopGracefully(t, cmd, logs)
	// Every request carries it (a component may append "/<its name>").
	wantUA := fmt.Sprintf("multicache/%s (%s/%s)", stamped, runtime.GOOS, runtime.GOARCH)
	got := proxy.userAgents()
	if len(got) == 0 {
		t.Error("no request reached the API server through the proxy")
	}
	for _, ua := range got {
		if !strings.HasPrefix(ua, wantUA) {
			t.Errorf("the API server saw User-Agent %q, want %q", ua, wantUA)
		}
	}
	if !strings.Contains(logs.String(), `"version":"`+stamped+`"`) {
		t.Errorf("the start-up log does not name version %s:\n%s", stamped, logs)
	}
}

// TestBinary_UnstampedVersionFallsBack checks what a plain `go build` reports.
func TestBinary_UnstampedVersionFallsBack(t *testing.T) {
	out, err := exec.Command(buildOperator(t), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "multicache v0.0.0-dev ") {
		t.Errorf("--version of an unstamped build printed %q", out)
	}
}

// TestMakefile_StampsTheGitVersion checks the version `make` stamps into binaries: `git
// describe` in a checkout, v0.0.0-dev where git cannot describe the tree, and that build,
// run and docker-build all pass it on.
func TestMakefile_StampsTheGitVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	makeOut := func(extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"--no-print-directory", "-s"}, args...)...)
		cmd.Dir = env.RepoRoot
		cmd.Env = append(withoutMakeVars(os.Environ()), extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	describe := exec.Command("git", "describe", "--tags", "--always", "--dirty")
	describe.Dir = env.RepoRoot
	if want, err := describe.Output(); err == nil {
		if got := makeOut(nil, "version"); got != string(want) {
			t.Errorf("make version = %q, want git describe's %q", got, want)
		}
	}
	if got := makeOut([]string{"GIT_DIR=" + t.TempDir()}, "version"); got != "v0.0.0-dev\n" {
		t.Errorf("make version without a git repository = %q, want v0.0.0-dev", got)
	}
	stamp := "-X " + versionPackage + ".Version=v1.2.3-x"
	for target, want := range map[string]string{"build": stamp, "run": stamp, "docker-build": "--build-arg VERSION=v1.2.3-x"} {
		// -n prints the recipes without running them; with no KUBECONFIG and an empty HOME
		// `run` takes its --local branch, which has no recursive make.
		if got := makeOut([]string{"KUBECONFIG=", "KUBERNETES_SERVICE_HOST=", "HOME=" + t.TempDir()}, "-n", target, "VERSION=v1.2.3-x"); !strings.Contains(got, want) {
			t.Errorf("make %s does not stamp the version (%q):\n%s", target, want, got)
		}
	}
	dockerfile, err := os.ReadFile(filepath.Join(env.RepoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ARG VERSION", "-X " + versionPackage + ".Version=${VERSION}"} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("the Dockerfile does not stamp the build arg VERSION: no %q", want)
		}
	}
}

// recordingProxy forwards plain HTTP to the API server with the test's credentials and
// records the User-Agent of every request.
type recordingProxy struct {
	srv *httptest.Server
	mu  sync.Mutex
	uas map[string]bool
}

func newRecordingProxy(t *testing.T, cfg *rest.Config) *recordingProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{uas: map[string]bool{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			p.mu.Lock()
			p.uas[r.In.UserAgent()] = true
			p.mu.Unlock()
		},
		Transport:     transport,
		FlushInterval: -1, // watches stream
	}
	p.srv = httptest.NewServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *recordingProxy) kubeconfig(t *testing.T) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(p.srv.URL, "http://"))
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: http://%s
contexts:
- name: proxy
  context:
    cluster: proxy
    user: proxy
users:
- name: proxy
  user: {}
current-context: proxy
`, net.JoinHostPort(host, port))
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *recordingProxy) userAgents() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for ua := range p.uas {
		out = append(out, ua)
	}
	sort.Strings(out)
	return out
}

// withoutMakeVars drops the variables a parent make (`make test`) passes down, so that the
// make a test runs sees only what the test gives it.
func withoutMakeVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" && name != "MAKEOVERRIDES" {
			out = append(out, kv)
		}
	}
	return out
}
