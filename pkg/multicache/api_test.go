package multicache_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/seed0f91f25e/multicache"

// TestPublicAPI_NoInternalTypeInAnyExportedDeclaration is the contract of `go doc -all` for
// every public package (everything under pkg/: multicache, its store package, storetest,
// envtest): no exported declaration (type, alias,
// function, method, exported field, interface method, constant, variable) names a type of
// an internal package, so an extender can name every type the API hands out and the
// internals stay free to change. It type-checks the exported API from the compiler's
// export data.
func TestPublicAPI_NoInternalTypeInAnyExportedDeclaration(t *testing.T) {
	public := goList(t, "../...")
	for _, want := range []string{"/pkg/multicache", "/pkg/multicache/store", "/pkg/multicache/store/storetest", "/pkg/envtest"} {
		if !slices.Contains(public, module+want) {
			t.Fatalf("public packages %v: %s is missing", public, module+want)
		}
	}
	imp := exportImporter(t, public)
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatal(err)
		}
		if leaks := internalLeaks(pkg); len(leaks) != 0 {
			t.Errorf("%s shows internal types in its exported API:\n\t%s", path, strings.Join(leaks, "\n\t"))
		}
	}
}

// TestPublicAPI_TheCheckFindsInternalTypes keeps the check above honest: internal/operator
// exports fields of internal types (Operator.Cache is a *handler.Handler), and the check
// must say so.
func TestPublicAPI_TheCheckFindsInternalTypes(t *testing.T) {
	path := module + "/internal/operator"
	pkg, err := exportImporter(t, []string{path}).Import(path)
	if err != nil {
		t.Fatal(err)
	}
	leaks := internalLeaks(pkg)
	if !slices.ContainsFunc(leaks, func(l string) bool { return strings.HasPrefix(l, "Operator.Cache:") }) {
		t.Errorf("the check misses Operator.Cache (a *handler.Handler); it found %v", leaks)
	}
}

// goList returns the import paths of the packages matching pattern, from this directory.
func goList(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, stderrOf(err))
	}
	return strings.Fields(string(out))
}

// exportImporter imports packages from the export data `go list -export` builds (the
// build cache has it after `go test` compiled them).
func exportImporter(t *testing.T, pkgs []string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", stderrOf(err))
	}
	exports := map[string]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
	}
	return importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return err.Error()
}

// internalLeaks lists, as "Declaration: type", every exported declaration of pkg that
// names a type of an internal package.
func internalLeaks(pkg *types.Package) []string {
	var leaks []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		check := func(what string, typ types.Type) {
			for _, leaked := range internalTypes(typ) {
				leaks = append(leaks, what+": "+leaked)
			}
		}
		tn, isType := obj.(*types.TypeName)
		if !isType {
			check(name, obj.Type()) // function, variable, constant
			continue
		}
		if tn.IsAlias() {
			check(name, obj.Type())
			continue
		}
		named, ok := obj.Type().(*types.Named)
		if !ok {
			continue
		}
		for i := range named.TypeParams().Len() {
			check(name, named.TypeParams().At(i).Constraint())
		}
		switch u := named.Underlying().(type) {
		case *types.Struct:
			for i := range u.NumFields() {
				if f := u.Field(i); f.Exported() {
					check(name+"."+f.Name(), f.Type())
				}
			}
		default:
			check(name, u)
		}
		methods := types.NewMethodSet(types.NewPointer(named))
		for i := range methods.Len() {
			if m := methods.At(i).Obj(); m.Exported() {
				check(name+"."+m.Name(), m.Type())
			}
		}
	}
	return leaks
}

// internalTypes returns the internal types typ names, without looking inside named types
// (their own declarations are checked where they are declared).
func internalTypes(typ types.Type) []string {
	var out []string
	seen := map[types.Type]bool{}
	var walk func(types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Alias:
			if isInternal(t.Obj().Pkg()) {
				out = append(out, t.String())
			}
			walk(types.Unalias(t))
		case *types.Named:
			if isInternal(t.Obj().Pkg()) {
				out = append(out, t.String())
			}
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Chan:
			walk(t.Elem())
		case *types.Map:
			walk(t.Key())
			walk(t.Elem())
		case *types.Signature:
			for i := range t.TypeParams().Len() {
				walk(t.TypeParams().At(i).Constraint())
			}
			for i := range t.Params().Len() {
				walk(t.Params().At(i).Type())
			}
			for i := range t.Results().Len() {
				walk(t.Results().At(i).Type())
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() {
					walk(f.Type())
				}
			}
		case *types.Interface:
			for i := range t.NumMethods() {
				walk(t.Method(i).Type())
			}
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := range t.Len() {
				walk(t.Term(i).Type())
			}
		case *types.TypeParam:
			walk(t.Constraint())
		}
	}
	walk(typ)
	return out
}

func isInternal(pkg *types.Package) bool {
	if pkg == nil {
		return false
	}
	p := pkg.Path()
	return strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal") || strings.HasPrefix(p, "internal/")
}
