package install

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// helm returns bin/helm, skipping the test when `make helm` has not run (`make test` runs
// it first).
func helm(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(env.RepoRoot, "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("bin/helm is missing: run `make helm` (make test does) to render dist/chart: %v", err)
	}
	return bin
}

// helmTemplate renders dist/chart into namespace with the extra arguments.
func helmTemplate(t *testing.T, namespace string, args ...string) ([]*unstructured.Unstructured, string, error) {
	t.Helper()
	cmd := exec.Command(helm(t), append([]string{"template", "multicache", filepath.Join(env.RepoRoot, "dist", "chart"),
		"--namespace", namespace}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = string(exit.Stderr)
		}
		return nil, stderr, err
	}
	return decodeYAML(t, out), "", nil
}

// TestHelmChart_IsGeneratedFromConfig regenerates the chart with `make helm-chart` and
// compares it with the committed dist/chart.
func TestHelmChart_IsGeneratedFromConfig(t *testing.T) {
	kustomize(t)
	dir := t.TempDir()
	if out, err := runMake(t, nil, "-s", "-o", "manifests", "helm-chart", "CHART_DIR="+dir); err != nil {
		t.Fatalf("make helm-chart: %v\n%s", err, out)
	}
	generated, committed := readTree(t, dir), readTree(t, filepath.Join(env.RepoRoot, "dist", "chart"))
	for path, content := range generated {
		if committed[path] != content {
			t.Errorf("dist/chart/%s differs from what config/ generates: run `make helm-chart` and commit dist/chart", path)
		}
	}
	for path := range committed {
		if _, ok := generated[path]; !ok {
			t.Errorf("dist/chart/%s is no longer generated: run `make helm-chart` and commit dist/chart", path)
		}
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHelmChart_InstallsWhatInstallYAMLInstalls renders the chart with `helm template`
// into another namespace and checks that it holds the objects of dist/install.yaml, equal
// but for the namespace and the managed-by label (no Namespace: --create-namespace makes
// it), and that the API server accepts every one of them.
func TestHelmChart_InstallsWhatInstallYAMLInstalls(t *testing.T) {
	want := installed(t)
	const ns = "helm-release"
	repo, tag, _ := strings.Cut(testImage, ":v")
	got, stderr, err := helmTemplate(t, ns, "--include-crds", "--set", "image.repository="+repo, "--set", "image.tag=v"+tag)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	byKey := func(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		out := map[string]*unstructured.Unstructured{}
		for _, u := range objs {
			if u.GetKind() != "Namespace" {
				out[u.GetKind()+"/"+u.GetName()] = normalize(u)
			}
		}
		return out
	}
	fromHelm, fromInstaller := byKey(got), byKey(want)
	for key, w := range fromInstaller {
		w = inNamespace(w, "multicache-system", ns)
		g, ok := fromHelm[key]
		if !ok {
			t.Errorf("the chart has no %s", key)
			continue
		}
		if !equality.Semantic.DeepEqual(g.Object, w.Object) {
			t.Errorf("%s differs between the chart and install.yaml:\nchart:     %v\ninstaller: %v", key, g.Object, w.Object)
		}
	}
	var extra []string
	for key := range fromHelm {
		if _, ok := fromInstaller[key]; !ok {
			extra = append(extra, key)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("the chart has objects install.yaml has not: %v", extra)
	}

	ctx := context.Background()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	for _, u := range got {
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner("helm-test"), client.ForceOwnership); err != nil {
			t.Errorf("the API server rejects %s %s of the chart: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// normalize drops what Helm and kustomize legitimately label differently.
func normalize(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	labels := u.GetLabels()
	delete(labels, "app.kubernetes.io/managed-by")
	if len(labels) == 0 {
		labels = nil
	}
	u.SetLabels(labels)
	return u
}

// inNamespace moves an object of install.yaml from one namespace to another, subjects too.
func inNamespace(u *unstructured.Unstructured, from, to string) *unstructured.Unstructured {
	u = u.DeepCopy()
	if u.GetNamespace() == from {
		u.SetNamespace(to)
	}
	if subjects, ok := u.Object["subjects"].([]any); ok {
		for _, s := range subjects {
			if s, ok := s.(map[string]any); ok && s["namespace"] == from {
				s["namespace"] = to
			}
		}
	}
	return u
}

// TestHelmChart_ValuesAreValidatedAndApplied checks the values a user sets: wrong ones
// fail naming the value; right ones reach the objects.
func TestHelmChart_ValuesAreValidatedAndApplied(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"replicaCount=0"}, "/replicaCount"},
		{[]string{"replicaCount=two"}, "/replicaCount"},
		{[]string{"image.repository=Bad Repo"}, "/image/repository"},
		{[]string{"image.tag=v1 2"}, "/image/tag"},
		{[]string{"extraArgs[0]=stores=nodes"}, "/extraArgs/0"},
		{[]string{"networkPolicy.enabled=maybe"}, "/networkPolicy/enabled"},
		{[]string{"replicas=3"}, "replicas"},
	} {
		args := []string{}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		_, stderr, err := helmTemplate(t, "ns", args...)
		if err == nil {
			t.Errorf("--set %v: helm template succeeded", tc.set)
		} else if !strings.Contains(stderr, tc.want) {
			t.Errorf("--set %v: the error does not name %s:\n%s", tc.set, tc.want, stderr)
		}
	}

	objs, stderr, err := helmTemplate(t, "ns", "--set", "replicaCount=3", "--set", "extraArgs[0]=--pod-assumed-ttl=5m",
		"--set", "podDisruptionBudget.enabled=false", "--set", "networkPolicy.enabled=false", "--set", "rbac.userRoles=false",
		"--set-string", "resources.requests.cpu=2")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	for _, u := range objs {
		switch name := u.GetName(); {
		case u.GetKind() == "PodDisruptionBudget", u.GetKind() == "NetworkPolicy",
			strings.HasSuffix(name, "-viewer-role"), strings.HasSuffix(name, "-editor-role"),
			name == "multicache-node-agent-role", name == "multicache-descheduler-role":
			t.Errorf("%s %s is installed though switched off", u.GetKind(), name)
		case u.GetKind() == "Deployment":
			replicas, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			c := containers[0].(map[string]any)
			args, _, _ := unstructured.NestedStringSlice(c, "args")
			cpu, _, _ := unstructured.NestedString(c, "resources", "requests", "cpu")
			if fmt.Sprint(replicas) != "3" || args[len(args)-1] != "--pod-assumed-ttl=5m" || cpu != "2" {
				t.Errorf("the Deployment does not take the values: replicas %v, args %v, cpu %q", replicas, args, cpu)
			}
		}
	}
}
