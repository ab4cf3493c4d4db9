package install

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSamples_StatusIsAppliedThroughTheStatusSubresource does what `make run` does against
// a configured cluster: apply config/samples server-side (the API server drops the status
// of a kind with a status subresource, so NMNode and CNR would show empty nodes), then
// apply them again to the status subresource, after which their status is the samples'.
func TestSamples_StatusIsAppliedThroughTheStatusSubresource(t *testing.T) {
	out, err := exec.Command(kustomize(t), "build", filepath.Join(env.RepoRoot, "config", "samples")).Output()
	if err != nil {
		t.Fatalf("kustomize build config/samples: %v", err)
	}
	samples := decodeYAML(t, out)
	ctx := context.Background()
	apply := func(u *unstructured.Unstructured, status bool) error {
		ac := client.ApplyConfigurationFromUnstructured(u.DeepCopy())
		if status {
			return env.Client.Status().Apply(ctx, ac, client.FieldOwner("kubectl"), client.ForceOwnership)
		}
		return env.Client.Apply(ctx, ac, client.FieldOwner("kubectl"), client.ForceOwnership)
	}
	read := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	withStatus := 0
	for _, u := range samples {
		if err := apply(u, false); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u.DeepCopy()) })
		if _, ok := u.Object["status"]; ok {
			withStatus++
			if st, _ := read(u).Object["status"].(map[string]any); len(st) > 0 {
				t.Errorf("%s %s: the main resource took status %v; then the second apply is not needed", u.GetKind(), u.GetName(), st)
			}
		}
	}
	if withStatus < 2 {
		t.Fatalf("want the NMNode and CNR samples to carry status, %d do", withStatus)
	}
	for _, u := range samples {
		if err := apply(u, true); err != nil {
			t.Fatalf("apply --subresource=status %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if want, ok := u.Object["status"]; ok {
			if got := read(u).Object["status"]; !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("%s %s: status %v, want the sample's %v", u.GetKind(), u.GetName(), got, want)
			}
		}
	}
}

// TestMakeRun_AppliesStatusAndBindsLocally checks the commands `make run` runs (make -n):
// against a configured cluster it applies the samples' status through the status
// subresource; on both branches the operator binds metrics (plain HTTP, curl-able) and
// probes to 127.0.0.1 and logs for a person, and runs as a built binary, not `go run`
// (which exits 1 when interrupted, so make would print `Error 1` after a clean Ctrl-C).
func TestMakeRun_AppliesStatusAndBindsLocally(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	local := []string{"KUBECONFIG=", "KUBERNETES_SERVICE_HOST=", "HOME=" + t.TempDir()}
	cluster := []string{"KUBECONFIG=" + kubeconfig}
	for name, tc := range map[string]struct {
		env  []string
		want []string
	}{
		"local": {local, []string{"--local "}},
		"cluster": {cluster, []string{
			"apply --server-side -f -",
			"apply --server-side --subresource=status -f -",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := runMake(t, tc.env, "-n", "run")
			if err != nil {
				t.Fatalf("make -n run: %v\n%s", err, out)
			}
			want := append(tc.want, "--metrics-bind-address=127.0.0.1:8080", "--metrics-secure=false",
				"--health-probe-bind-address=127.0.0.1:8081", "--zap-encoder=console", "bin/multicache\" ")
			if strings.Contains(out, "go run") {
				t.Errorf("make run uses `go run`, which exits 1 on Ctrl-C:\n%s", out)
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("make run does not run %q:\n%s", w, out)
				}
			}
			if strings.Index(out, "--subresource=status") >= 0 && strings.Index(out, "--subresource=status") < strings.Index(out, "apply --server-side -f -") {
				t.Errorf("the status is applied before the objects exist:\n%s", out)
			}
		})
	}
}

// TestMakeRun_BuildsKubectlWhenNoneIsOnPath: a newcomer without kubectl gets the one of the
// control plane's version, built from Go modules (make kubectl), which the recipes then run.
func TestMakeRun_BuildsKubectlWhenNoneIsOnPath(t *testing.T) {
	path := t.TempDir() // bash (the recipes' shell) and make, no kubectl
	for _, tool := range []string{"bash", "make"} {
		bin, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(bin, filepath.Join(path, tool)); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(t.TempDir(), "kubectl")
	out, err := runMake(t, []string{"PATH=" + path, "KUBECONFIG=" + kubeconfig}, "-n", "run", "KUBECTL_BIN="+built, "GO=go")
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	for _, want := range []string{"building kubectl", "cd hack/envtest/kubectl && go build -o " + built + ".tmp",
		"| " + built + " apply --server-side -f -"} {
		if !strings.Contains(out, want) {
			t.Errorf("make run without kubectl on PATH does not run %q:\n%s", want, out)
		}
	}
	if out, err := runMake(t, nil, "-n", "run", "KUBECTL_BIN="+built); err == nil && strings.Contains(out, "building kubectl") && hasKubectl() {
		t.Errorf("make run builds kubectl although one is on PATH:\n%s", out)
	}
}

func hasKubectl() bool { _, err := exec.LookPath("kubectl"); return err == nil }

// TestSamples_CarryNoFixedTimes: a time in a sample's status (an agent's updateTime) is a
// fixed date that printer columns show as its age, `UPDATED 329d` just after `make run`.
func TestSamples_CarryNoFixedTimes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(env.RepoRoot, "config", "samples", "cache_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string:
			if _, err := time.Parse(time.RFC3339, v); err == nil {
				t.Errorf("a sample sets %s to the fixed time %s: leave it to the agent", path, v)
			}
		}
	}
	for _, f := range files {
		rel, _ := filepath.Rel(env.RepoRoot, f)
		for _, u := range readYAML(t, rel) {
			walk(u.GetKind()+"/"+u.GetName()+" status", u.Object["status"])
		}
	}
}
