// Package crd carries the generated CustomResourceDefinitions of cache.multicache.dev
// (config/crd/bases, written by `make manifests`) inside any binary that imports it: --local
// installs them into the control plane it starts, with no checkout at hand.
package crd

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// CRDs decodes the embedded CRDs.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := fs.WalkDir(bases, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := bases.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("embedded CRD %s: %w", path, err)
		}
		crds = append(crds, crd)
		return nil
	})
	if err == nil && len(crds) == 0 {
		err = errors.New("no CRDs embedded: run `make manifests`")
	}
	return crds, err
}
