package run

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TestResumeLegacyCheckpoint resumes run directories stopped at iteration 20
// of 30 by the code before the Method refactoring (testdata/legacy/*/
// unfinished) and checks that they finish exactly as the uninterrupted runs
// of that code did (testdata/legacy/*/want): TR-MAML and MAML are
// reproduced bit for bit. Their checkpoints have no hash and name no run,
// so resume and trmaml seal refuse them (nothing proves what they belong
// to); the test binds them itself (bindLegacy), as only a test may.
func TestResumeLegacyCheckpoint(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"trmaml-last", "trmaml-T2", "maml-T1"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("testdata", "legacy", name)
			dir := filepath.Join(t.TempDir(), "run")
			if out, err := exec.Command("cp", "-r", filepath.Join(src, "unfinished"), dir).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if _, err := Resume(context.Background(), dir, Options{}); !errors.Is(err, rundir.ErrUnsealed) || !strings.Contains(err.Error(), "trmaml seal -run "+dir) {
				t.Fatalf("resume of an unsealed run: %v, want a refusal naming trmaml seal", err)
			}
			if err := rundir.SealExisting(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, rundir.CheckpointFile)+": sha256: missing") {
				t.Fatalf("seal of a checkpoint without a hash: %v, want a refusal naming it", err)
			}
			if _, err := os.Stat(filepath.Join(dir, rundir.ManifestFile)); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a refused seal wrote the manifest")
			}
			bindLegacy(t, dir)
			if _, err := Resume(context.Background(), dir, Options{}); err != nil {
				t.Fatal(err)
			}
			got, want := readResult(t, filepath.Join(dir, rundir.ResultFile)), readResult(t, filepath.Join(src, "want", rundir.ResultFile))
			got.Timing, want.Timing = rundir.Timing{}, rundir.Timing{}
			got.StateSHA256 = "" // the recorded files predate the bindings
			if !sameRecorded(t, got, want) {
				t.Errorf("resumed result.json differs from the recorded one: meta-test mean %v, want %v", got.MetaTest.Mean, want.MetaTest.Mean)
			}
			a, _ := os.ReadFile(filepath.Join(dir, rundir.PFile))
			a = bindingLines.ReplaceAll(a, nil) // the recorded files predate the bindings
			b, _ := os.ReadFile(filepath.Join(src, "want", rundir.PFile))
			if !sameRecorded(t, string(a), string(b)) {
				t.Errorf("%s differs from the recorded one", rundir.PFile)
			}
			// model.json now names the model's kind; the solution is the same.
			gotModel, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
			if err != nil {
				t.Fatal(err)
			}
			wantModel, err := rundir.ReadModel(filepath.Join(src, "want", rundir.ModelFile))
			if err != nil {
				t.Fatal(err)
			}
			if gotModel.Kind != "mlp" || !sameRecorded(t, [][]float64{gotModel.W, gotModel.P}, [][]float64{wantModel.W, wantModel.P}) {
				t.Errorf("model.json: kind %q, or w and p differ from the recorded ones", gotModel.Kind)
			}
		})
	}
}

// TestNewMethods trains each algorithm briefly through the run directory
// path: deterministic, a distribution p in result.json that the method's
// feasible set holds, and every config algorithm has a method.
func TestNewMethods(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		alg   string
		level float64
	}{{"trmaml_entropic", 0}, {"cvar", 0.5}, {"cvar", 1}} {
		cfg := tinyConfig()
		cfg.Algorithm = c.alg
		if c.level > 0 {
			cfg.Settings("cvar").(*metalearn.CVaR).Level = c.level
		}
		cfg.Settings("cvar").(*metalearn.CVaR).PLR, cfg.Settings("trmaml_entropic").(*metalearn.EntropicTRMAML).PLR = 1e-2, 1e-1
		var results []rundir.Result
		for _, d := range []string{"a", "b"} {
			dir := filepath.Join(t.TempDir(), d)
			if _, err := Train(context.Background(), cfg, dir, Options{}); err != nil {
				t.Fatal(err)
			}
			r := readResult(t, filepath.Join(dir, rundir.ResultFile))
			r.Timing = rundir.Timing{}
			results = append(results, r)
		}
		if !reflect.DeepEqual(results[0], results[1]) {
			t.Errorf("%s: two runs with the same seed differ", c.alg)
		}
		p := results[0].FinalP
		sum, top := 0.0, 0.0
		for _, v := range p {
			sum += v
			top = max(top, v)
		}
		if len(p) != 100 || math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: final p has %d entries summing to %v", c.alg, len(p), sum)
		}
		if c.alg == "cvar" && results[0].CVaRLevel != c.level {
			t.Errorf("result.json names level %v, want %v", results[0].CVaRLevel, c.level)
		}
		if c.alg == "cvar" && top > 1/(c.level*100)+1e-15 {
			t.Errorf("cvar level %v: a weight %v above the cap %v", c.level, top, 1/(c.level*100))
		}
		if c.alg == "trmaml_entropic" && top <= 0.0100001 {
			t.Errorf("entropic: p stayed uniform (largest weight %v)", top)
		}
	}
	for _, alg := range metalearn.MethodNames() {
		cfg := configs.Defaults()
		cfg.Algorithm = alg
		if _, err := cfg.NewMethod(); err != nil {
			t.Errorf("algorithm %s: %v", alg, err)
		}
	}
}

// sameRecorded reports whether a and b (values, or JSON and CSV text) are the
// same. The runs were recorded by the plain Go loops; those and the SSE and
// AVX sets, which compute the same values, reproduce them bit for bit. The
// SIMD kernels (graph.SIMD) sum float64 products in
// another order, so there every number in the text (as parsed by
// strconv.ParseFloat) may differ by 1e-12 relative to its magnitude, and
// nothing else may differ.
func sameRecorded(t *testing.T, a, b any) bool {
	t.Helper()
	if sa, ok := a.(string); ok {
		sb := b.(string)
		if !graph.SIMD() {
			return sa == sb
		}
		return closeNumbers(sa, sb, 1e-12)
	}
	if !graph.SIMD() {
		return reflect.DeepEqual(a, b)
	}
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return closeNumbers(string(ja), string(jb), 1e-12)
}

// bindingLines are the lines of model.json that bind it (rundir.WriteBound).
var bindingLines = regexp.MustCompile(`,\n  "state_sha256": "[0-9a-f]{64}",\n  "sha256": "[0-9a-f]{64}"`)

// numberRE matches the numbers of JSON and CSV text.
var numberRE = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?`)

// closeNumbers reports whether a and b are the same text but for numbers,
// pairwise within rel of the larger magnitude (or of 1, for numbers near 0).
func closeNumbers(a, b string, rel float64) bool {
	if numberRE.ReplaceAllString(a, "#") != numberRE.ReplaceAllString(b, "#") {
		return false
	}
	na, nb := numberRE.FindAllString(a, -1), numberRE.FindAllString(b, -1)
	for i := range na {
		x, _ := strconv.ParseFloat(na[i], 64)
		y, _ := strconv.ParseFloat(nb[i], 64)
		if math.Abs(x-y) > rel*max(math.Abs(x), math.Abs(y), 1) {
			return false
		}
	}
	return true
}

func TestCloseNumbers(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"w":[0.5,-1.25e-3]}`, `{"w":[0.5,-1.25e-3]}`, true},
		{`{"w":[0.5000000000001,1]}`, `{"w":[0.5,1]}`, true},
		{`{"w":[0.50001,1]}`, `{"w":[0.5,1]}`, false},
		{`{"w":[0.5,1]}`, `{"v":[0.5,1]}`, false},
		{`{"w":[0.5,1]}`, `{"w":[0.5,1,2]}`, false},
		{"iteration,p\n10,0.25\n", "iteration,p\n20,0.25\n", false},
	} {
		if got := closeNumbers(c.a, c.b, 1e-12); got != c.want {
			t.Errorf("closeNumbers(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// bindLegacy gives the checkpoint of the legacy run in dir the bindings
// (hash, seed, config hash, row hashes) and seals the directory.
func bindLegacy(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, rundir.CheckpointFile)
	var ck rundir.Checkpoint
	if err := json.Unmarshal(mustReadFile(t, path), &ck); err != nil {
		t.Fatal(err)
	}
	yml := mustReadFile(t, filepath.Join(dir, rundir.ConfigFile))
	cfg, err := configs.Parse("config.yaml", yml)
	if err != nil {
		t.Fatal(err)
	}
	ck.Seed, ck.ConfigSHA256 = cfg.Seed, rundir.HashBytes(yml)
	last, err := ck.LastRow()
	if err != nil {
		t.Fatal(err)
	}
	var rows [2][]byte
	for i, f := range []string{rundir.MetricsFile, rundir.PFile} {
		raw := mustReadFile(t, filepath.Join(dir, f))
		n, ok := rundir.RowsPrefix(raw, last)
		if !ok {
			t.Fatalf("%s has no row %d", f, last)
		}
		rows[i] = raw[:n]
	}
	ck.BindRows(rows[0], rows[1], nil)
	if _, err := rundir.WriteCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Seal(dir, false); err != nil {
		t.Fatal(err)
	}
}
