package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// namePrefix is config/default's namePrefix; file names drop it.
const namePrefix = "multicache-"

// Placeholders set in the objects before they are marshalled, replaced by template
// expressions after.
const (
	phNamespace = "__RELEASE_NAMESPACE__"
	phManagedBy = "__MANAGED_BY__"
	phReplicas  = "__REPLICAS__"
	phImage     = "__IMAGE__"
	phResources = "__RESOURCES__"
	phExtraArgs = "__EXTRA_ARGS__"
)

var (
	placeholder   = regexp.MustCompile(`__[A-Z_]+__`)
	resourcesLine = regexp.MustCompile(`(?m)^( *)resources: ` + phResources + `$`)
	extraArgsLine = regexp.MustCompile(`(?m)^( *)- ` + phExtraArgs + `$`)
)

// object is one rendered manifest.
type object map[string]any

func (o object) kind() string { s, _ := o["kind"].(string); return s }

func (o object) meta() map[string]any { m, _ := o["metadata"].(map[string]any); return m }

func (o object) name() string { s, _ := o.meta()["name"].(string); return s }

// generate turns the rendered manifests into the chart's files.
func generate(rendered []byte) (map[string]string, error) {
	objs, err := decode(rendered)
	if err != nil {
		return nil, err
	}
	namespace := ""
	var deployment object
	for _, o := range objs {
		switch o.kind() {
		case "Namespace":
			namespace = o.name()
		case "Deployment":
			if deployment != nil {
				return nil, errors.New("more than one Deployment rendered; the chart templates one")
			}
			deployment = o
		}
	}
	if namespace == "" {
		return nil, errors.New("no Namespace rendered: want the output of `kustomize build config/default`")
	}
	if deployment == nil {
		return nil, errors.New("no Deployment rendered: want the output of `kustomize build config/default`")
	}
	defaults, err := valuesOf(deployment)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, o := range objs {
		switch o.kind() {
		case "Namespace":
			continue // helm install --create-namespace
		case "CustomResourceDefinition":
			data, err := yaml.Marshal(map[string]any(o))
			if err != nil {
				return nil, err
			}
			files["crds/"+o.name()+".yaml"] = generatedHeader + string(data)
			continue
		}
		text, err := template(o, namespace)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.kind(), o.name(), err)
		}
		files[fileName("templates", o.kind(), o.name())] = generatedHeader + text
	}
	for path, content := range staticFiles(defaults) {
		files[path] = content
	}
	return files, nil
}

// decode reads every non-empty document.
func decode(rendered []byte) ([]object, error) {
	var objs []object
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	for {
		var o object
		if err := dec.Decode(&o); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading the rendered manifests: %w", err)
		}
		if len(o) == 0 {
			continue
		}
		if o.kind() == "" || o.name() == "" {
			return nil, fmt.Errorf("a rendered document has no kind or name: %v", map[string]any(o))
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return nil, errors.New("no manifests on standard input: pipe `kustomize build config/default` into it")
	}
	return objs, nil
}

// template renders one object as a Helm template.
func template(o object, namespace string) (string, error) {
	raw, err := yaml.Marshal(map[string]any(o))
	if err != nil {
		return "", err
	}
	if bytes.Contains(raw, []byte("{{")) {
		return "", errors.New("contains {{, which Helm would read as a template")
	}
	if placeholder.Match(raw) {
		return "", fmt.Errorf("contains %q, which chartgen uses as a placeholder", placeholder.Find(raw))
	}
	o = deepCopy(o)
	meta := o.meta()
	if meta["namespace"] == namespace {
		meta["namespace"] = phNamespace
	}
	if labels, ok := meta["labels"].(map[string]any); ok && labels["app.kubernetes.io/managed-by"] == "kustomize" {
		labels["app.kubernetes.io/managed-by"] = phManagedBy
	}
	if subjects, ok := o["subjects"].([]any); ok {
		for _, s := range subjects {
			if s, ok := s.(map[string]any); ok && s["namespace"] == namespace {
				s["namespace"] = phNamespace
			}
		}
	}
	if o.kind() == "Deployment" {
		if err := templateDeployment(o); err != nil {
			return "", err
		}
	}
	data, err := yaml.Marshal(map[string]any(o))
	if err != nil {
		return "", err
	}
	text := string(data)
	text = strings.ReplaceAll(text, phNamespace, "{{ .Release.Namespace }}")
	text = strings.ReplaceAll(text, phManagedBy, "{{ .Release.Service }}")
	text = strings.ReplaceAll(text, "replicas: "+phReplicas, "replicas: {{ .Values.replicaCount }}")
	text = strings.ReplaceAll(text, "image: "+phImage, `image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"`)
	text = resourcesLine.ReplaceAllStringFunc(text, func(line string) string {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		return fmt.Sprintf("%sresources:\n%s{{- toYaml .Values.resources | nindent %d }}", line[:indent], line[:indent], indent+2)
	})
	text = extraArgsLine.ReplaceAllStringFunc(text, func(line string) string {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		return fmt.Sprintf("%s{{- with .Values.extraArgs }}\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}", line[:indent], line[:indent], indent, line[:indent])
	})
	if placeholder.MatchString(text) {
		return "", fmt.Errorf("placeholder %q was left in the template", placeholder.FindString(text))
	}
	if cond := condition(o); cond != "" {
		text = "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
	}
	return text, nil
}

// templateDeployment puts the values' placeholders into the one container.
func templateDeployment(o object) error {
	spec, _ := o["spec"].(map[string]any)
	podSpec, _ := nested(spec, "template", "spec").(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	if len(containers) != 1 {
		return fmt.Errorf("want one container, found %d", len(containers))
	}
	c, _ := containers[0].(map[string]any)
	spec["replicas"] = phReplicas
	c["image"] = phImage
	c["resources"] = phResources
	args, _ := c["args"].([]any)
	c["args"] = append(args, phExtraArgs)
	return nil
}

// condition is the value that switches an object on, "" when it is always installed.
func condition(o object) string {
	switch name := o.name(); {
	case o.kind() == "PodDisruptionBudget":
		return ".Values.podDisruptionBudget.enabled"
	case o.kind() == "NetworkPolicy":
		return ".Values.networkPolicy.enabled"
	case o.kind() == "ClusterRole" && (strings.HasSuffix(name, "-viewer-role") || strings.HasSuffix(name, "-editor-role") ||
		name == namePrefix+"node-agent-role" || name == namePrefix+"descheduler-role"):
		return ".Values.rbac.userRoles"
	}
	return ""
}

// nested walks maps along keys.
func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// deepCopy copies an object through YAML (its values are YAML's types).
func deepCopy(o object) object {
	data, _ := yaml.Marshal(map[string]any(o))
	var out object
	_ = yaml.Unmarshal(data, &out)
	return out
}
