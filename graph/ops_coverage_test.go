package graph

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
)

// declaredKernels reads the package's source (every non-test .go file, all
// build tags) and returns the types that have the kernel methods name,
// shape, forward and grad, each with the file that declares its forward.
func declaredKernels(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]map[string]bool{}
	where := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			id, ok := recv.(*ast.Ident)
			if !ok {
				continue
			}
			if methods[id.Name] == nil {
				methods[id.Name] = map[string]bool{}
			}
			methods[id.Name][fn.Name.Name] = true
			if fn.Name.Name == "forward" {
				where[id.Name] = f
			}
		}
	}
	kernels := map[string]string{}
	for typ, m := range methods {
		if m["name"] && m["shape"] && m["forward"] && m["grad"] {
			kernels[typ] = where[typ]
		}
	}
	return kernels
}

// TestOpsTableCoversEveryKernel: every kernel type declared in the package
// appears in the graph built by some row of opRows, the table of
// TestOpsNestedFiniteDifferences and TestOpsFloat32, so that a kernel added
// without a row (whose first and second derivatives would go unchecked)
// fails here. The kernels are found in the source, not listed by hand.
func TestOpsTableCoversEveryKernel(t *testing.T) {
	t.Parallel()
	declared := declaredKernels(t)
	if len(declared) < 10 {
		t.Fatalf("found only %d kernel types in the source: %v", len(declared), declared)
	}
	covered := map[string][]string{} // kernel type -> rows
	rng := rand.New(rand.NewPCG(1, 1))
	for _, row := range opRows {
		g := newGraph()
		in := make(gorgonia.Nodes, len(row.in))
		for i, s := range row.in {
			var err error
			if in[i], err = gtInput(g.ExprGraph, fmt.Sprintf("x%d", i), s, awayFromZero(rng, i, s.TotalSize())); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := row.build(in); err != nil {
			t.Fatalf("row %s: %v", row.name, err)
		}
		for _, n := range g.ExprGraph.AllNodes() {
			if o, ok := n.Op().(*op); ok {
				typ := reflect.TypeOf(o.k)
				if typ.Kind() == reflect.Pointer {
					typ = typ.Elem()
				}
				if !slices.Contains(covered[typ.Name()], row.name) {
					covered[typ.Name()] = append(covered[typ.Name()], row.name)
				}
			}
		}
	}
	for typ, file := range declared {
		if len(covered[typ]) == 0 {
			t.Errorf("kernel %s (%s) is in no row of opRows (ops_test.go): add one so that its derivatives are checked", typ, file)
		}
	}
	for typ := range covered {
		if _, ok := declared[typ]; !ok {
			t.Errorf("the rows build kernel %s, which declaredKernels did not find in the source", typ)
		}
	}
	t.Logf("%d kernel types, each built by a row", len(declared))
}
