package install

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testImage is the image the tests render dist/install.yaml with.
const testImage = "registry.example/multicache:v1.2.3"

var (
	installOnce    sync.Once
	installObjects []*unstructured.Unstructured
	installErr     string
)

// installed renders the installer with `make build-installer` (without regenerating the
// CRDs and RBAC: `make test` did) and applies every object server-side to the test API
// server, once per test binary. It returns the rendered objects.
func installed(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	kustomize(t)
	installOnce.Do(func() { installObjects, installErr = renderAndApply(t) })
	if installErr != "" {
		t.Fatal(installErr)
	}
	return installObjects
}

func renderAndApply(t *testing.T) ([]*unstructured.Unstructured, string) {
	kustomization := filepath.Join(env.RepoRoot, "config", "manager", "kustomization.yaml")
	before, err := os.ReadFile(kustomization)
	if err != nil {
		return nil, err.Error()
	}
	path := filepath.Join(t.TempDir(), "dist", "install.yaml")
	out, err := runMake(t, nil, "-o", "manifests", "-o", "generate", "build-installer", "IMG="+testImage, "INSTALLER="+path)
	if err != nil {
		return nil, fmt.Sprintf("make build-installer: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(kustomization); !bytes.Equal(before, after) {
		return nil, "make build-installer edited config/manager/kustomization.yaml; it must leave the tree as it was"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err.Error()
	}
	objs := decodeYAML(t, data)

	// The Namespace first: the namespaced objects need it. Then everything, as
	// `kubectl apply --server-side -f dist/install.yaml` does.
	ctx := context.Background()
	apply := func(u *unstructured.Unstructured) error {
		return env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner("install-test"), client.ForceOwnership)
	}
	var rejected []string
	for _, u := range objs {
		if u.GetKind() == "Namespace" {
			if err := apply(u); err != nil {
				rejected = append(rejected, fmt.Sprintf("%s %s: %v", u.GetKind(), u.GetName(), err))
			}
		}
	}
	for _, u := range objs {
		if err := apply(u); err != nil {
			rejected = append(rejected, fmt.Sprintf("%s %s: %v", u.GetKind(), u.GetName(), err))
		}
	}
	if len(rejected) > 0 {
		return nil, "the API server rejected objects of install.yaml:\n" + strings.Join(rejected, "\n")
	}
	return objs, ""
}

// TestBuildInstaller_RendersEverythingTheAPIServerAccepts checks dist/install.yaml: every
// object config/default installs is there, with the image set, and the real API server
// accepts each of them (server-side apply, as `kubectl apply --server-side` does).
func TestBuildInstaller_RendersEverythingTheAPIServerAccepts(t *testing.T) {
	objs := installed(t)
	got := map[string]bool{}
	for _, u := range objs {
		got[u.GetKind()+"/"+u.GetName()] = true
		if u.GetNamespace() != "" && u.GetNamespace() != "multicache-system" {
			t.Errorf("%s %s is in namespace %s, want multicache-system", u.GetKind(), u.GetName(), u.GetNamespace())
		}
		// Read back: applied means stored.
		back := &unstructured.Unstructured{}
		back.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), back); err != nil {
			t.Errorf("%s %s not stored: %v", u.GetKind(), u.GetName(), err)
		}
	}
	want := []string{
		"Namespace/multicache-system",
		"ServiceAccount/multicache-controller-manager",
		"Deployment/multicache-controller-manager",
		"PodDisruptionBudget/multicache-controller-manager",
		"Service/multicache-controller-manager-metrics-service",
		"NetworkPolicy/multicache-allow-metrics-traffic",
		"ClusterRole/multicache-manager-role",
		"ClusterRoleBinding/multicache-manager-rolebinding",
		"Role/multicache-leader-election-role",
		"RoleBinding/multicache-leader-election-rolebinding",
		"ClusterRole/multicache-metrics-auth-role",
		"ClusterRoleBinding/multicache-metrics-auth-rolebinding",
		"ClusterRole/multicache-metrics-reader",
		"ClusterRole/multicache-node-agent-role",
		"ClusterRole/multicache-descheduler-role",
	}
	for _, kind := range kinds {
		want = append(want,
			"CustomResourceDefinition/"+kind.plural+".cache.multicache.dev",
			"ClusterRole/multicache-"+kind.file+"-viewer-role",
			"ClusterRole/multicache-"+kind.file+"-editor-role")
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("install.yaml has no %s", w)
		}
	}
	if len(got) != len(want) {
		var names []string
		for n := range got {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("install.yaml has %d objects, want %d:\n%s", len(got), len(want), strings.Join(names, "\n"))
	}
}

// TestBuildInstaller_RejectsABadImageAndKeepsThePreviousFile checks the errors a user can
// hit: an empty or malformed IMG fails, names IMG, and leaves an existing install.yaml as
// it was.
func TestBuildInstaller_RejectsABadImageAndKeepsThePreviousFile(t *testing.T) {
	kustomize(t)
	path := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(path, []byte("previous\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, img := range []string{"", "Has Space:v1", "UPPER/multicache:v1", "multicache:bad:tag", `x"; touch pwned; "`, "reg.example/x@sha256:short"} {
		out, err := runMake(t, []string{"IMG=" + img}, "-o", "manifests", "-o", "generate", "build-installer", "INSTALLER="+path)
		if err == nil {
			t.Errorf("IMG=%q: make build-installer succeeded:\n%s", img, out)
		}
		if !strings.Contains(out, "is not an image reference") {
			t.Errorf("IMG=%q: the error does not say what is wrong:\n%s", img, out)
		}
		if data, _ := os.ReadFile(path); string(data) != "previous\n" {
			t.Errorf("IMG=%q: the previous install.yaml was overwritten", img)
		}
	}
	if _, err := os.Stat(filepath.Join(env.RepoRoot, "pwned")); err == nil {
		_ = os.Remove(filepath.Join(env.RepoRoot, "pwned"))
		t.Error("a quote in IMG ran a command")
	}
}
