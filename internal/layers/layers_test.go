// Package layers holds only a test: the module's import graph runs one way, from the
// binaries down to the store contract.
package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/seed0f91f25e/multicache/"

// layers lists the module's packages by layer, top first (a path prefix names a package and
// everything under it; the longest prefix wins). A package imports only packages of its own
// layer or below. pkg/multicache/store is the contract at the bottom that every store
// imports; pkg/multicache is the facade at the top that wraps the operator for extenders.
var layers = [][]string{
	{".", "cmd", "examples", "hack"},
	{"pkg/multicache", "pkg/envtest", "pkg/multicache/store/storetest", "internal/publicreader"},
	{"internal/operator"},
	{"internal/controllers", "internal/debug", "internal/verify", "internal/siblings"},
	{"internal/handler"},
	{"internal/drift", "internal/testsupport", "internal/harness"},
	{"internal/stores"},
	{"internal/controlplane", "internal/scheme", "internal/metrics", "internal/yield", "internal/jsonstream",
		"internal/version", "internal/memlimit", "internal/reconnect", "internal/nodepods", "internal/wiretrim",
		"internal/install", "internal/chartgen", "config"},
	{"pkg/multicache/store", "api"},
}

// rank returns the layer of a package path relative to the module (0 is the top).
func rank(t *testing.T, pkg string) int {
	best, at := -1, 0
	for i, layer := range layers {
		for _, prefix := range layer {
			if (pkg == prefix || prefix == "." || strings.HasPrefix(pkg, prefix+"/")) && len(prefix) > best {
				best, at = len(prefix), i
			}
		}
	}
	if best < 0 {
		t.Fatalf("package %s is in no layer: add it to layers", pkg)
	}
	return at
}

// TestLayers_NoImportRunsBackUp parses every non-test file of the main module and fails on
// an import of a higher layer. (Test files may reach up: a store's test may start a handler.)
func TestLayers_NoImportRunsBackUp(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "dist") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module: bench, scheduler, test/chaos, examples/*
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		from := rank(t, filepath.ToSlash(dir))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			target, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			checked++
			if to := rank(t, target); to < from {
				t.Errorf("%s imports %s, a layer above it: move the code down or invert the dependency", filepath.ToSlash(dir), target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d imports: is the walk rooted at the module?", checked)
	}
}
