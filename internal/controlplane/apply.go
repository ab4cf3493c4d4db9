package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyManifests creates (or updates) every object in the YAML files named by paths; a
// directory stands for its *.yaml files except kustomization.yaml. An object that carries a
// status has it written through the status subresource afterwards, so samples can show what
// an agent would report. It returns "Kind namespace/name" of every object applied.
func ApplyManifests(ctx context.Context, c client.Client, paths []string) ([]string, error) {
	files, err := manifestFiles(paths)
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, file := range files {
		objs, err := readManifests(file)
		if err != nil {
			return applied, err
		}
		for _, obj := range objs {
			if err := applyOne(ctx, c, obj); err != nil {
				return applied, fmt.Errorf("%s: %s %s: %w", file, obj.GetKind(), obj.GetName(), err)
			}
			name := obj.GetName()
			if ns := obj.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			applied = append(applied, obj.GetKind()+" "+name)
		}
	}
	return applied, nil
}

func manifestFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("manifests: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var inDir []string
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || name == "kustomization.yaml" || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
				continue
			}
			inDir = append(inDir, filepath.Join(p, name))
		}
		sort.Strings(inDir)
		files = append(files, inDir...)
	}
	return files, nil
}

func readManifests(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func applyOne(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	status, hasStatus := obj.Object["status"]
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(obj.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), current)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	case err != nil:
		return err
	default:
		obj.SetResourceVersion(current.GetResourceVersion())
		if err := c.Update(ctx, obj); err != nil {
			return err
		}
	}
	if !hasStatus {
		return nil
	}
	obj.Object["status"] = status
	return c.Status().Update(ctx, obj)
}
