package run_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// tilted_t is the example's Tilted registered again with its temperature
// as its swept setting, as CVaR's level is.
func init() {
	metalearn.RegisterMethod(metalearn.MethodInfo{
		Name: "tilted_t", Swept: "t",
		New:        func() metalearn.MethodSettings { return &Tilted{T: 1} },
		SweptValue: func(s metalearn.MethodSettings) float64 { return s.(*Tilted).T },
	})
}

// TestSweptSettingIsNotACVaRLevel: result.json's cvar_level is CVaR's; a
// run of another method with a swept setting does not write its value
// there, while its config.yaml, which reports read, holds it.
func TestSweptSettingIsNotACVaRLevel(t *testing.T) {
	t.Parallel()
	cfg, err := configs.Parse("tilted.yaml", []byte(`
algorithm: tilted_t
tilted_t: {t: 20}
task: {family: linreg}
meta: {iterations: 10, batch: 10}
eval: {every: 10, instances: 30, train_instances: 30, query: 20}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Swept(); got != 20 {
		t.Fatalf("Swept() = %v, want the temperature 20", got)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := run.Train(context.Background(), cfg, dir, run.Options{}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "cvar_level") {
		t.Errorf("result.json of a tilted_t run records a cvar_level:\n%s", raw)
	}
	stored, err := configs.Load(filepath.Join(dir, rundir.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := stored.Swept(); got != 20 {
		t.Errorf("config.yaml's swept setting = %v, want 20", got)
	}
}
