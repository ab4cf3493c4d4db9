package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minimal is the smallest input chartgen accepts: a Namespace and a Deployment.
const minimal = `apiVersion: v1
kind: Namespace
metadata:
  name: ns
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: multicache-controller-manager
  namespace: ns
  labels:
    app.kubernetes.io/managed-by: kustomize
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: manager
        image: reg.example/multicache:v1
        args: ["--leader-elect"]
        resources:
          requests:
            cpu: 100m
`

func TestGenerate_TemplatesTheDeploymentAndDropsTheNamespace(t *testing.T) {
	files, err := generate([]byte(minimal + `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: multicache-manager-rolebinding
subjects:
- kind: ServiceAccount
  name: multicache-controller-manager
  namespace: ns
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: multicache-controller-manager
  namespace: ns
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.dev
spec:
  group: example.dev
`))
	if err != nil {
		t.Fatal(err)
	}
	dep := files["templates/deployment-controller-manager.yaml"]
	for _, want := range []string{
		"namespace: {{ .Release.Namespace }}",
		"app.kubernetes.io/managed-by: {{ .Release.Service }}",
		"replicas: {{ .Values.replicaCount }}",
		`image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"`,
		"        - --leader-elect\n        {{- with .Values.extraArgs }}\n        {{- toYaml . | nindent 8 }}\n        {{- end }}\n",
		"        resources:\n        {{- toYaml .Values.resources | nindent 10 }}\n",
	} {
		if !strings.Contains(dep, want) {
			t.Errorf("the Deployment template misses %q:\n%s", want, dep)
		}
	}
	if b := files["templates/clusterrolebinding-manager-rolebinding.yaml"]; !strings.Contains(b, "namespace: {{ .Release.Namespace }}") {
		t.Errorf("the binding's subject keeps its namespace:\n%s", b)
	}
	if p := files["templates/poddisruptionbudget-controller-manager.yaml"]; !strings.HasPrefix(strings.SplitN(p, "\n", 2)[1], "{{- if .Values.podDisruptionBudget.enabled }}") {
		t.Errorf("the PodDisruptionBudget is not switched by its value:\n%s", p)
	}
	if c := files["crds/things.example.dev.yaml"]; c == "" || strings.Contains(c, "{{") {
		t.Errorf("the CRD is not copied verbatim to crds/:\n%s", c)
	}
	for path := range files {
		if strings.Contains(path, "namespace") {
			t.Errorf("the Namespace became %s; helm install --create-namespace makes it", path)
		}
	}
	if v := files["values.yaml"]; !strings.Contains(v, "repository: reg.example/multicache\n") || !strings.Contains(v, "replicaCount: 2\n") ||
		!strings.Contains(v, "resources:\n  requests:\n    cpu: 100m\n") {
		t.Errorf("values.yaml does not carry the rendered defaults:\n%s", v)
	}
}

func TestGenerate_RejectsWhatItCannotTemplate(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"empty input", "", "no manifests on standard input"},
		{"not YAML", "kind: [", "reading the rendered manifests"},
		{"no kind", "metadata:\n  name: x\n", "no kind or name"},
		{"no Namespace", strings.SplitN(minimal, "---\n", 2)[1], "no Namespace rendered"},
		{"no Deployment", strings.SplitN(minimal, "---\n", 2)[0], "no Deployment rendered"},
		{"two Deployments", minimal + "---\n" + strings.SplitN(minimal, "---\n", 2)[1], "more than one Deployment"},
		{"braces", minimal + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: '{{ oops }}'\n", "contains {{"},
		{"placeholder", minimal + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: __IMAGE__\n", "placeholder"},
		{"two containers", strings.Replace(minimal, "      - name: manager\n", "      - name: sidecar\n        image: x\n      - name: manager\n", 1), "containers, want one"},
		{"no replicas", strings.Replace(minimal, "  replicas: 2\n", "", 1), "replicas"},
		{"no image", strings.Replace(minimal, "        image: reg.example/multicache:v1\n", "", 1), "no image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := generate([]byte(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestValuesOf_RepositoryWithoutTagOrDigest(t *testing.T) {
	for image, want := range map[string]string{
		"reg.example/multicache:v1":         "reg.example/multicache",
		"localhost:5000/multicache":         "localhost:5000/multicache",
		"localhost:5000/multicache:v1":      "localhost:5000/multicache",
		"reg.example/multicache@sha256:abc": "reg.example/multicache",
		"multicache":                        "multicache",
	} {
		d := object{"spec": map[string]any{"replicas": float64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"image": image}},
		}}}}
		v, err := valuesOf(d)
		if err != nil || v.repository != want {
			t.Errorf("%s: repository %q (%v), want %q", image, v.repository, err, want)
		}
	}
}

func TestRun_ReplacesTheGeneratedDirectories(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "templates", "gone.yaml")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(strings.NewReader(minimal), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a template of an object no longer rendered is kept: %v", err)
	}
	for _, f := range []string{"Chart.yaml", "values.yaml", "values.schema.json", "templates/NOTES.txt", "templates/deployment-controller-manager.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	if err := run(strings.NewReader(""), dir); err == nil {
		t.Error("empty input: want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err != nil {
		t.Errorf("a failed run removed the chart: %v", err)
	}
}
