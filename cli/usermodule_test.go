package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/safetensors"
)

// The separate module of TestUserModuleTrmaml: a model package of its own
// (skipmlp, registered from init, with named tensors for export) and a
// five-line main around Main. Nothing of this repository is edited; go.mod
// replaces the framework by this checkout.
const (
	userGoMod = `module example.com/mytrmaml

go 1.26

require github.com/trmaml/trmaml v0.0.0

replace github.com/trmaml/trmaml => REPO
`
	userMain = `package main

import (
	"os"

	_ "example.com/mytrmaml/skipmlp" // the model, registered from init
	"github.com/trmaml/trmaml/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
`
	userModel = `// Package skipmlp is a one-hidden-layer tanh network with a linear skip
// connection from the input, y = W2 tanh(W1 x + b1) + b2 + V x.
package skipmlp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/models"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

const Name = "skipmlp"

type Config struct {
	Hidden int ` + "`yaml:\"hidden\"`" + `
}

type Net struct{ In, Hidden, Out int }

func (n Net) ParamShapes() []tensor.Shape {
	return []tensor.Shape{{n.In, n.Hidden}, {n.Hidden}, {n.Hidden, n.Out}, {n.Out}, {n.In, n.Out}}
}

func (n Net) Forward(x *gorgonia.Node, p gorgonia.Nodes) (*gorgonia.Node, error) {
	h, err := graph.MatMul(x, p[0], false, false)
	if err != nil {
		return nil, err
	}
	if h, err = graph.AddBias(h, p[1]); err != nil {
		return nil, err
	}
	if h, err = graph.Tanh.Apply(h); err != nil {
		return nil, err
	}
	if h, err = graph.MatMul(h, p[2], false, false); err != nil {
		return nil, err
	}
	if h, err = graph.AddBias(h, p[3]); err != nil {
		return nil, err
	}
	skip, err := graph.MatMul(x, p[4], false, false)
	if err != nil {
		return nil, err
	}
	return graph.Axpy(h, skip, 1)
}

type Model struct{}

func init() {
	configs.RegisterModel(Model{})
	models.Register(Name, Model{})
}

func (Model) Name() string    { return Name }
func (Model) NewSection() any { return &Config{Hidden: 16} }

func (Model) Check(c configs.Config, io configs.IO, k *configs.Checker) {
	k.Between("model.skipmlp.hidden", c.Model.Section().(*Config).Hidden, 1, 4096)
}

func (Model) Memory(c configs.Config, io configs.IO) configs.MemoryEstimate {
	h := float64(c.Model.Section().(*Config).Hidden)
	per := 64 * h * float64(io.Inputs()+io.Outputs+1)
	return configs.MemoryEstimate{
		TrainGraph: per * float64(c.Meta.Batch*(c.Task.Support*(c.Inner.Steps+1)+c.Task.Query)),
		EvalGraph:  per * float64(c.Eval.Batch*(c.Task.Support+c.Eval.Query)),
	}
}

func (Model) Shrink(c configs.Config) []configs.Shrunk {
	s := *c.Model.Section().(*Config)
	small := s
	small.Hidden = 1
	return []configs.Shrunk{{Path: "model.skipmlp.hidden", Value: s.Hidden, Section: &small}}
}

func (Model) CPUs(configs.Config) int { return 1 }

// Tensors names the parameters as a PyTorch module with Linear layers
// fc1, fc2 and skip (no bias) would: weights [out, in].
func (Model) Tensors(c configs.Config, io configs.IO, w []float64) ([]configs.Tensor, error) {
	n := Net{In: io.Inputs(), Hidden: c.Model.Section().(*Config).Hidden, Out: io.Outputs}
	names := []string{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "skip.weight"}
	var out []configs.Tensor
	for i, s := range n.ParamShapes() {
		size := s.TotalSize()
		if len(w) < size {
			return nil, fmt.Errorf("skipmlp: %d parameters left for %s", len(w), names[i])
		}
		v := w[:size]
		w = w[size:]
		if len(s) == 1 {
			out = append(out, configs.Tensor{Name: names[i], Shape: []int{s[0]}, Data: append([]float64(nil), v...)})
			continue
		}
		t := make([]float64, size)
		for r := range s[0] {
			for k := range s[1] {
				t[k*s[0]+r] = v[r*s[1]+k]
			}
		}
		out = append(out, configs.Tensor{Name: names[i], Shape: []int{s[1], s[0]}, Data: t})
	}
	return out, nil
}

func (Model) Build(section any, io configs.IO) (models.Built, error) {
	n := Net{In: io.Inputs(), Hidden: section.(*Config).Hidden, Out: io.Outputs}
	return models.Built{
		Net: n, InShape: []int{n.In}, Record: n,
		Init: func(rng *rand.Rand) ([]float64, error) {
			var w []float64
			for _, s := range n.ParamShapes() {
				for range s.TotalSize() {
					if len(s) == 1 {
						w = append(w, 0)
					} else {
						w = append(w, rng.NormFloat64()/math.Sqrt(float64(s[0])))
					}
				}
			}
			return w, nil
		},
	}, nil
}
`
	userConfig = `name: skip
algorithm: maml
order: second
seed: 1
task:
  family: sinusoid
  support: 5
  query: 5
model:
  kind: skipmlp
  skipmlp: {hidden: 12}
inner: {kind: sgd, steps: 1, alpha: 0.01}
meta: {iterations: 60, batch: 5}
eval: {every: 30, instances: 490, train_instances: 100, query: 5, batch: 245}
`
	userGrid = `name: skipgrid
base: skip.yaml
algorithms: [maml, trmaml]
orders: [first]
seeds: [1]
iterations: 40
sweep: {model.skipmlp.hidden: [4, 8]}
`
)

// TestUserModuleTrmaml builds, in a module of its own outside this
// repository, a trmaml whose main is five lines around Main with a blank
// import of a model package of that module, and runs it: train from YAML,
// eval, export to safetensors, a grid that sweeps the model's own field,
// the grid's report, and plot. It is the promise that a model
// needs no file of this repository edited.
func TestUserModuleTrmaml(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program of a separate module (-short)")
	}
	t.Parallel()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command beside the toolchain that built this test (%v)", err)
	}
	mod := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod":             strings.Replace(userGoMod, "REPO", repo, 1),
		"go.sum":             string(sum), // the framework's dependencies, verified as they are here
		"main.go":            userMain,
		"skipmlp/skipmlp.go": userModel,
	}
	for name, text := range files {
		path := filepath.Join(mod, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(mod, "mytrmaml")
	build := exec.Command(gobin, "build", "-o", bin, ".")
	build.Dir = mod
	// -mod=mod completes go.mod with the framework's requirements; go.sum
	// already holds their hashes, so only the module proxy (or the local
	// module cache) is needed, never the checksum database.
	build.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the separate module: %v\n%s", err, out)
	}

	work := t.TempDir()
	for name, text := range map[string]string{"skip.yaml": userConfig, "grid.yaml": userGrid} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("mytrmaml %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}

	// A misspelt key of the user's section is refused like a built-in one's.
	bad := filepath.Join(work, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(userConfig, "{hidden: 12}", "{hiden: 12}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var refused bytes.Buffer
	cmd := exec.Command(bin, "train", "-config", bad, "-out", filepath.Join(work, "never"))
	cmd.Stdout, cmd.Stderr = &refused, &refused
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 ||
		!strings.Contains(refused.String(), "bad.yaml") || !strings.Contains(refused.String(), "hiden") || !strings.Contains(refused.String(), "hidden") {
		t.Errorf("a misspelt model.skipmlp key: %v, want exit 2 naming the file, the key and the allowed one:\n%s", err, refused.String())
	}
	if _, err := os.Stat(filepath.Join(work, "never")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused train wrote %s (%v)", filepath.Join(work, "never"), err)
	}

	dir := filepath.Join(work, "run")
	run("train", "-config", "skip.yaml", "-out", dir)
	m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	const params = 12 + 12 + 12 + 1 + 1 // fc1, its bias, fc2, its bias, skip
	if len(m.W) != params {
		t.Fatalf("model.json has %d parameters, skipmlp with 12 hidden units has %d", len(m.W), params)
	}
	run("eval", "-run", dir)
	if _, err := os.Stat(filepath.Join(dir, "evaluation.json")); err != nil {
		t.Errorf("eval wrote no evaluation.json: %v", err)
	}

	run("export", "-run", dir, "-format", "safetensors", "-out", filepath.Join(work, "export"))
	raw, err := os.ReadFile(filepath.Join(work, "export", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	tensors, meta, err := safetensors.Decode("model.safetensors", raw)
	if err != nil {
		t.Fatal(err)
	}
	if meta["kind"] != "skipmlp" {
		t.Errorf("export metadata kind %q, want skipmlp", meta["kind"])
	}
	var names []string
	for _, tn := range tensors {
		names = append(names, tn.Name)
		if tn.Name == "fc2.weight" { // [1, 12]: graph's (12, 1) column, transposed
			for k, v := range tn.Data {
				if v != float32(m.W[24+k]) {
					t.Errorf("fc2.weight[0][%d] = %v, model.json has %v", k, v, m.W[24+k])
				}
			}
		}
	}
	slices.Sort(names)
	if want := []string{"fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight", "skip.weight"}; !slices.Equal(names, want) {
		t.Errorf("exported tensors %v, want %v", names, want)
	}

	grid := filepath.Join(work, "grid")
	run("experiment", "-config", "grid.yaml", "-out", grid, "-jobs", "2")
	table, err := os.ReadFile(filepath.Join(grid, "table.md"))
	if err != nil {
		entries, _ := os.ReadDir(grid)
		t.Fatalf("the grid's report: %v (grid holds %v)", err, entries)
	}
	for _, want := range []string{"hidden4", "hidden8", "TR-MAML"} {
		if !strings.Contains(string(table), want) {
			t.Errorf("the grid's table does not name %q:\n%s", want, table)
		}
	}
	cells, err := filepath.Glob(filepath.Join(grid, "*", rundir.ResultFile))
	if err != nil || len(cells) != 4 {
		t.Fatalf("the grid finished %d cells (%v), want 4", len(cells), err)
	}
	var runs []string
	for _, c := range cells {
		runs = append(runs, filepath.Dir(c))
		b, err := os.ReadFile(filepath.Join(filepath.Dir(c), "config.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "kind: skipmlp") {
			t.Errorf("%s: config.yaml does not record model.kind skipmlp", filepath.Dir(c))
		}
	}
	run(append([]string{"report", "-out", filepath.Join(work, "report")}, runs...)...)
	run(append([]string{"plot", "-out", filepath.Join(work, "plots")}, runs...)...)
	pngs, _ := filepath.Glob(filepath.Join(work, "plots", "*.png"))
	if len(pngs) == 0 {
		t.Errorf("plot wrote no PNG figure")
	}
}

// TestExtendingShowsUserMain: the main that docs/extending.md shows is the
// one TestUserModuleTrmaml builds, line for line.
func TestExtendingShowsUserMain(t *testing.T) {
	t.Parallel()
	page := docsCode(docsPage(t, "extending.md"))
	code := docsCode(userMain)
	for i := range page {
		if slices.Equal(page[i:min(i+len(code), len(page))], code) {
			return
		}
	}
	t.Errorf("docs/extending.md does not show the main of TestUserModuleTrmaml:\n%s", userMain)
}
