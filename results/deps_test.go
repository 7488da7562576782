package results

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/trmaml/trmaml"

// engine lists what reporting must not link: the graph engine (gorgonia
// and the packages that build or train models) and the data side of task
// families (image decoding, the Omniglot downloader).
var engine = []string{
	"gorgonia.org/",
	module + "/graph",
	module + "/run",
	module + "/experiment",
	module + "/tasks/omniglot/data",
	"net/http",
	"archive/zip",
}

// moduleDeps returns every import of the module's package in dir and of
// the module's packages it imports, transitively, under the default build
// context (build tags included), with the path of packages that import it.
func moduleDeps(t *testing.T, root, dir string) map[string]string {
	t.Helper()
	deps := map[string]string{}
	var visit func(dir, path string)
	visit = func(dir, path string) {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if _, seen := deps[imp]; seen {
				continue
			}
			deps[imp] = path
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				visit(filepath.Join(root, filepath.FromSlash(rel)), imp)
			}
		}
	}
	visit(filepath.Join(root, dir), module+"/"+dir)
	return deps
}

// TestReportingLinksNoEngine: results and plots read run directories
// through package rundir and configs; they link neither gorgonia nor the
// training code nor the Omniglot loader, so that reporting builds and runs
// without them. go list -deps ./results ./plots says the same, counting
// third-party packages too.
func TestReportingLinksNoEngine(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"results", "plots"} {
		deps := moduleDeps(t, "..", dir)
		if _, ok := deps[module+"/rundir"]; !ok {
			t.Errorf("%s does not import rundir: the walk is broken", dir)
		}
		for imp, by := range deps {
			for _, e := range engine {
				if imp == e || strings.HasPrefix(imp, strings.TrimSuffix(e, "/")+"/") {
					t.Errorf("%s links %s (imported by %s)", dir, imp, by)
				}
			}
		}
	}
}
