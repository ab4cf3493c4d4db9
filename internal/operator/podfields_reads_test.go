package operator

import (
	"go/ast"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/tools/go/packages"
	corev1 "k8s.io/api/core/v1"
)

// leftOutFields are the Go names of the fields podWirePaths names, by the core/v1 type
// that holds them, found from their protobuf numbers.
func leftOutFields(t *testing.T) map[string][]string {
	t.Helper()
	tree := newPathTree(podWirePaths())
	out := map[string][]string{}
	var walk func(typ reflect.Type, tree *pathTree)
	walk = func(typ reflect.Type, tree *pathTree) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			num := protoNumber(f)
			if slices.Contains(tree.drop, num) {
				out[typ.Name()] = append(out[typ.Name()], f.Name)
			} else if sub := tree.into[num]; sub != nil {
				walk(f.Type, sub)
			}
		}
	}
	walk(reflect.TypeFor[corev1.Pod](), tree)
	if len(out["Container"]) == 0 || len(out["EphemeralContainerCommon"]) == 0 || len(out["PodStatus"]) == 0 {
		t.Fatalf("found no left-out fields of some types: %v", out)
	}
	return out
}

// podReadingLibraries are the packages outside the module that the stores and views hand
// cached pods to: their reads count as the module's.
var podReadingLibraries = []string{
	"k8s.io/component-helpers/resource",
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity",
	"k8s.io/dynamic-resource-allocation/cel",
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache",
	"k8s.io/dynamic-resource-allocation/structured",
}

// TestPodFields_NoCodeReadsAFieldTheCacheLeavesOut type-checks every package of the module
// (not its tests; not the nested modules bench, bench/e2e and examples, which run their
// own informers) and the libraries it hands cached pods to, and fails on any selector of a
// pod field the cache's pods leave out (podfields.go) outside podfields.go itself: a store,
// a feed or a view that starts reading one would read an empty value from the cache. Read
// it through the API reader, or take the field out of podfields.go (and measure what
// keeping it costs).
func TestPodFields_NoCodeReadsAFieldTheCacheLeavesOut(t *testing.T) {
	t.Parallel() // type-checks the module, no API server: overlaps the parallel e2e tests' waits
	if testing.Short() {
		t.Skip("type-checks the module: not in -short")
	}
	left := leftOutFields(t)
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir:  filepath.Join("..", ".."),
	}
	if raceBuild {
		// The export data of the dependencies is then the test binary's own, already built.
		cfg.BuildFlags = []string{"-race"}
	}
	pkgs, err := packages.Load(cfg, append([]string{"./..."}, podReadingLibraries...)...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the module's packages do not type-check (errors above)")
	}
	for _, lib := range podReadingLibraries {
		if !slices.ContainsFunc(pkgs, func(p *packages.Package) bool { return p.PkgPath == lib }) {
			t.Fatalf("%s was not loaded", lib)
		}
	}
	const core = "k8s.io/api/core/v1"
	checked := 0
	for _, p := range pkgs {
		for _, file := range p.Syntax {
			if filepath.Base(p.Fset.File(file.Pos()).Name()) == "podfields.go" && p.PkgPath == "github.com/seed0f91f25e/multicache/internal/operator" {
				continue
			}
			checked++
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s := p.TypesInfo.Selections[sel]
				if s == nil || s.Kind() != types.FieldVal || s.Obj().Pkg() == nil || s.Obj().Pkg().Path() != core {
					return true
				}
				// The struct that declares the field: the receiver's, or an embedded one's.
				holder := holderOf(s)
				if slices.Contains(left[holder], s.Obj().Name()) {
					t.Errorf("%s reads %s.%s, which the cache's pods leave out (internal/operator/podfields.go)",
						p.Fset.Position(sel.Pos()), holder, s.Obj().Name())
				}
				return true
			})
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d files: the module was not loaded", checked)
	}
}

// holderOf is the name of the core/v1 struct type that declares the selected field.
func holderOf(s *types.Selection) string {
	typ := s.Recv()
	idx := s.Index()
	for i, at := range idx {
		for {
			if p, ok := typ.(*types.Pointer); ok {
				typ = p.Elem()
				continue
			}
			break
		}
		named, ok := typ.(*types.Named)
		if !ok {
			return ""
		}
		st, ok := named.Underlying().(*types.Struct)
		if !ok {
			return ""
		}
		if i == len(idx)-1 {
			return named.Obj().Name()
		}
		typ = st.Field(at).Type()
	}
	return ""
}
