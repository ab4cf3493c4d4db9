package install

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/seed0f91f25e/multicache/internal/testsupport"
)

var env *testsupport.Env

// TestMain starts the package's API server with an audit log of the operator's service
// account (TestRBAC_TheOperatorUsesExactlyWhatItIsGranted reads it).
func TestMain(m *testing.M) {
	// The in-process operator's logs go to stderr only when asked: MULTICACHE_TEST_LOGS=true.
	if os.Getenv("MULTICACHE_TEST_LOGS") == "true" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	testsupport.RunMainWith(m, &env, testsupport.StartOptions{AuditPolicy: auditPolicy})
}

// decodeYAML reads every non-empty document of a multi-document YAML stream.
func decodeYAML(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("decoding YAML: %v", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// readYAML decodes a file of the repository.
func readYAML(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.RepoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return decodeYAML(t, data)
}

// kustomize returns bin/kustomize, skipping the test when `make kustomize` has not run
// (`make test` runs it first).
func kustomize(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(env.RepoRoot, "bin", "kustomize")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("bin/kustomize is missing: run `make kustomize` (make test does) to render the manifests: %v", err)
	}
	return bin
}

// runMake runs make in the repository root and returns its combined output and error.
func runMake(t *testing.T, extraEnv []string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = env.RepoRoot
	// Not the variables a parent make (`make test`) passes down: only what the test gives.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" && name != "MAKEOVERRIDES" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
