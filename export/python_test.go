package export_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models/conv4"
	"github.com/trmaml/trmaml/safetensors"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// numpyOrSkip is pythonWithNumpy, or skips t without one unless
// TRMAML_REQUIRE_NUMPY=1 (CI), where it fails.
func numpyOrSkip(t *testing.T) string {
	t.Helper()
	py := pythonWithNumpy()
	if py == "" {
		if os.Getenv("TRMAML_REQUIRE_NUMPY") == "1" {
			t.Fatal("no python3 with numpy (apt-get install python3-numpy)")
		}
		t.Skip("no python3 with numpy")
	}
	return py
}

// pythonWithNumpy is a python3 that imports numpy (Debian's python3-numpy,
// which .ci/run installs), or "".
func pythonWithNumpy() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			return p
		}
	}
	return ""
}

// TestPythonRoundTrip exports a conv4 in float32 on non-square colour
// images, has scripts/safetensors_forward.py compute its logits on a fixed
// batch with numpy alone, as PyTorch would from the same tensors, and
// matches them with the logits of trmaml's layout (internal/reference.CNN,
// which graph's tests match) to 1e-5. It skips without numpy unless
// TRMAML_REQUIRE_NUMPY=1 (CI).
func TestPythonRoundTrip(t *testing.T) {
	py := numpyOrSkip(t)
	const n, c, h, w, blocks, f, ways = 5, 3, 12, 10, 3, 4, 5
	ref := reference.CNN{H: h, W: w, C: c, Filters: f, Blocks: blocks, Ways: ways, Eps: 1e-5}
	rng := rand.New(rand.NewPCG(7, 7))
	params := make([]float64, ref.NumParams())
	for i := range params {
		params[i] = float64(float32(0.5 * rng.NormFloat64())) // what the float32 file holds
	}
	x := make([]float64, n*h*w*c)
	var batch []byte
	for i := range x {
		x[i] = float64(float32(rng.NormFloat64()))
		batch = binary.LittleEndian.AppendUint32(batch, math.Float32bits(float32(x[i])))
	}
	cfg := configs.Defaults()
	cfg.Model.Kind = conv4.Name
	cfg.Model.Sections = map[string]any{conv4.Name: &conv4.Config{Filters: f, Blocks: blocks, Pool: "max", BatchNorm: "fixed"}}
	tensors, err := conv4.Model{}.Tensors(cfg, configs.IO{Height: h, Width: w, Channels: c, Outputs: ways, Classes: true}, params)
	if err != nil {
		t.Fatal(err)
	}
	st := make([]safetensors.Tensor, len(tensors))
	for i, tn := range tensors {
		st[i] = safetensors.Tensor{Name: tn.Name, Shape: tn.Shape}
		for _, v := range tn.Data {
			st[i].Data = append(st[i].Data, float32(v))
		}
	}
	raw, err := safetensors.Encode(st, map[string]string{"kind": "conv4", "io": "12 10 3 5 true"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model, data := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "batch.f32")
	os.WriteFile(model, raw, 0o644)
	os.WriteFile(data, batch, 0o644)
	out, err := exec.Command(py, filepath.Join("..", "scripts", "safetensors_forward.py"), model, data, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := ref.Forward(params, x, n)
	lines := strings.Fields(strings.ReplaceAll(string(out), "\n", " "))
	if len(lines) != len(want) {
		t.Fatalf("python printed %d logits, want %d: %s", len(lines), len(want), out)
	}
	worst := 0.0
	for i, s := range lines {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, math.Abs(v-want[i])/(1+math.Abs(want[i])))
	}
	t.Logf("%d logits, largest difference %.2g", len(want), worst)
	if worst > 1e-5 {
		t.Errorf("python's logits differ from trmaml's by %.3g > 1e-5", worst)
	}
}

// unadapted is an inner loop that leaves the model as it is, so that an
// objective scores the meta-parameters themselves.
type unadapted struct{}

func (unadapted) ParamShapes([]tensor.Shape, []bool) []tensor.Shape { return nil }
func (unadapted) Adapt(_ *graph.Support, theta, _ gorgonia.Nodes) (gorgonia.Nodes, error) {
	return theta, nil
}

// logits is a graph.Score that keeps the predictions it is given: the
// logits of graph's forward pass, outside the graph.
type logits struct{ pred *[]float64 }

func (logits) Name() string { return "logits" }
func (l logits) PerTask(pred, _ []float64, _, _ int, dst []float64) {
	*l.pred = append((*l.pred)[:0], pred...)
	clear(dst)
}

// TestPythonRoundTripVariants exports conv4s that are not the paper's
// (strided and unpooled blocks, no batch norm, a hidden layer, colour and
// non-square images), has scripts/safetensors_forward.py compute their
// logits on a fixed batch with numpy, and matches them with the logits of
// graph's engine (graph.CNN on the flat parameters) to 1e-5.
func TestPythonRoundTripVariants(t *testing.T) {
	py := numpyOrSkip(t)
	t.Parallel()
	const n, ways = 4, 3
	for i, s := range []conv4.Config{
		{Filters: 4, Blocks: 2, Pool: "stride", BatchNorm: "adapt", Hidden: 0},
		{Filters: 3, Blocks: 2, Pool: "none", BatchNorm: "off", Hidden: 5},
		{Filters: 5, Blocks: 2, Pool: "max", BatchNorm: "off", Hidden: 0},
		{Filters: 3, Blocks: 2, Pool: "stride", BatchNorm: "fixed", Hidden: 4},
	} {
		t.Run(fmt.Sprintf("pool %s, batch norm %s, hidden %d", s.Pool, s.BatchNorm, s.Hidden), func(t *testing.T) {
			h, w, c := 9, 7, 2+i%2
			m, err := graph.Conv4{Filters: s.Filters, Blocks: s.Blocks, Channels: c, Height: h, Width: w, Pool: s.Pool, BatchNorm: s.BatchNorm, Hidden: s.Hidden}.CNN(ways)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			params := m.Init(rng)
			for j := range params {
				params[j] = float64(float32(params[j] + 0.3*rng.NormFloat64()))
			}
			b := metalearn.NewBatch(1, n, n, h*w*c, ways)
			var batch []byte
			for j := range b.QueryX {
				b.QueryX[j] = float64(float32(rng.NormFloat64()))
				b.SupportX[j] = b.QueryX[j]
				batch = binary.LittleEndian.AppendUint32(batch, math.Float32bits(float32(b.QueryX[j])))
			}
			for p := range n {
				b.QueryY[p*ways+p%ways], b.SupportY[p*ways+p%ways] = 1, 1
			}
			var want []float64
			obj, err := graph.NewObjective(graph.Spec{Model: m, Loss: graph.SoftmaxCrossEntropy, Score: logits{&want},
				Tasks: 1, Support: n, Query: n, InShape: m.InShape(), OutDim: ways, Inner: unadapted{}, Lanes: 1})
			if err != nil {
				t.Fatal(err)
			}
			if err := obj.LossesMetric(params, b, nil, make([]float64, 1), make([]float64, 1), nil); err != nil {
				t.Fatal(err)
			}

			cfg := configs.Defaults()
			cfg.Model.Kind = conv4.Name
			cfg.Model.Sections = map[string]any{conv4.Name: &s}
			tensors, err := conv4.Model{}.Tensors(cfg, configs.IO{Height: h, Width: w, Channels: c, Outputs: ways, Classes: true}, params)
			if err != nil {
				t.Fatal(err)
			}
			st := make([]safetensors.Tensor, len(tensors))
			for k, tn := range tensors {
				st[k] = safetensors.Tensor{Name: tn.Name, Shape: tn.Shape}
				for _, v := range tn.Data {
					st[k].Data = append(st[k].Data, float32(v))
				}
			}
			raw, err := safetensors.Encode(st, map[string]string{"kind": "conv4",
				"model": fmt.Sprintf("model:\n  kind: conv4\n  conv4:\n    pool: %s\n", s.Pool),
				"io":    fmt.Sprintf("%d %d %d %d true", h, w, c, ways)})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			model, data := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "batch.f32")
			if err := os.WriteFile(model, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(data, batch, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, filepath.Join("..", "scripts", "safetensors_forward.py"), model, data, strconv.Itoa(n)).CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := strings.Fields(string(out))
			if len(got) != len(want) || len(want) != n*ways {
				t.Fatalf("python printed %d logits, graph computed %d, want %d: %s", len(got), len(want), n*ways, out)
			}
			worst := 0.0
			for k, f := range got {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil {
					t.Fatal(err)
				}
				worst = max(worst, math.Abs(v-want[k])/(1+math.Abs(want[k])))
			}
			t.Logf("%d logits, largest difference %.2g", len(want), worst)
			if worst > 1e-5 {
				t.Errorf("python's logits differ from graph's by %.3g > 1e-5:\npython %v\ngraph  %v", worst, got, want)
			}
		})
	}
}
