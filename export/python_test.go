package export_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/reference"
	"github.com/trmaml/trmaml/models/conv4"
	"github.com/trmaml/trmaml/safetensors"
)

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
	py := pythonWithNumpy()
	if py == "" {
		if os.Getenv("TRMAML_REQUIRE_NUMPY") == "1" {
			t.Fatal("no python3 with numpy (apt-get install python3-numpy)")
		}
		t.Skip("no python3 with numpy")
	}
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
