package run

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// TestResumeLegacyCheckpoint resumes run directories stopped at iteration 20
// of 30 by the code before the Method refactoring (testdata/legacy/*/
// unfinished) and checks that they finish exactly as the uninterrupted runs
// of that code did (testdata/legacy/*/want): old checkpoints keep working
// once sealed (trmaml seal; resume refuses them before), and TR-MAML and
// MAML are reproduced bit for bit.
func TestResumeLegacyCheckpoint(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"trmaml-last", "trmaml-T2", "maml-T1"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("testdata", "legacy", name)
			dir := filepath.Join(t.TempDir(), "run")
			if out, err := exec.Command("cp", "-r", filepath.Join(src, "unfinished"), dir).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if _, err := Resume(dir, Options{}); !errors.Is(err, rundir.ErrUnsealed) || !strings.Contains(err.Error(), "trmaml seal -run "+dir) {
				t.Fatalf("resume of an unsealed run: %v, want a refusal naming trmaml seal", err)
			}
			if err := rundir.SealExisting(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := Resume(dir, Options{}); err != nil {
				t.Fatal(err)
			}
			got, want := readResult(t, filepath.Join(dir, rundir.ResultFile)), readResult(t, filepath.Join(src, "want", rundir.ResultFile))
			got.Timing, want.Timing = rundir.Timing{}, rundir.Timing{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("resumed result.json differs from the recorded one: meta-test mean %v, want %v", got.MetaTest.Mean, want.MetaTest.Mean)
			}
			for _, f := range []string{rundir.ModelFile, rundir.PFile} {
				a, _ := os.ReadFile(filepath.Join(dir, f))
				b, _ := os.ReadFile(filepath.Join(src, "want", f))
				if string(a) != string(b) {
					t.Errorf("%s differs from the recorded one", f)
				}
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
			if _, err := Train(cfg, dir, Options{}); err != nil {
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
		if _, err := NewMethod(cfg); err != nil {
			t.Errorf("algorithm %s: %v", alg, err)
		}
	}
}
