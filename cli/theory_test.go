package cli

import (
	"bytes"
	"fmt"
	"github.com/trmaml/trmaml/metalearn"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/results/resultstest"
)

// TestTheoryCommand runs a small version of the Theorem 1 measurement and
// checks the files it writes and its refusals.
func TestTheoryCommand(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"theory", "-out", out, "-tmax", "1000", "-seeds", "2", "-per-decade", "1"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, f := range []string{"theorem1_gap.png", "theorem1_gap.csv", "theorem1_gap.md"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	csv := mustRead(t, filepath.Join(out, "theorem1_gap.csv"))
	if rows := strings.Count(csv, "\n"); rows != 1+2*2 {
		t.Errorf("theorem1_gap.csv has %d lines, want a header and 2 geometries x 2 values of T:\n%s", rows, csv)
	}
	if !strings.Contains(stdout.String(), "certified duality gap") || !strings.Contains(stdout.String(), "| entropic |") {
		t.Errorf("summary lacks the saddle certificate or a geometry:\n%s", stdout.String())
	}
	for _, args := range [][]string{{"theory"}, {"theory", "-out", out, "-tmax", "10", "-tmin", "100"}, {"theory", "-out", out, "-seeds", "1"},
		{"theory", "-out", out, "-tmin", "1", "-tmax", "1"}, {"theory", "-out", out, "-tmin", "5", "-tmax", "5"}} {
		if err := dispatch(args, &stdout, &stderr); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestTradeoffCommand draws the trade-off of MAML, TR-MAML and two CVaR
// levels from synthetic run directories.
func TestTradeoffCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for seed := uint64(1); seed <= 2; seed++ {
		for _, s := range []resultstest.Spec{
			resultstest.New("m", "maml", "second", seed, 5, 1),
			resultstest.New("tr", "trmaml", "second", seed, 5, 0.9),
			resultstest.New("c5", "cvar", "second", seed, 5, 0.95),
			resultstest.New("c1", "cvar", "second", seed, 5, 0.92),
		} {
			if s.Config.Name == "c1" {
				s.Config.Settings("cvar").(*metalearn.CVaR).Level = 0.1
			} else {
				s.Config.Settings("cvar").(*metalearn.CVaR).Level = 0.5
			}
			if err := s.Write(filepath.Join(root, fmt.Sprintf("%s-seed%d", s.Config.Name, seed))); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"tradeoff", "-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	md := mustRead(t, filepath.Join(out, "cvar_table.md"))
	for _, want := range []string{"CVaR a=0.5", "CVaR a=0.1", "MAML", "TR-MAML"} {
		if !strings.Contains(md, want) {
			t.Errorf("cvar_table.md lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "cvar_tradeoff.png")); err != nil {
		t.Error(err)
	}
	if seeds := mustRead(t, filepath.Join(out, "cvar_seeds.csv")); strings.Count(seeds, "\n") != 1+8 {
		t.Errorf("cvar_seeds.csv has %d lines, want a header and one per run (8):\n%s", strings.Count(seeds, "\n"), seeds)
	}

	// Accuracy runs are refused, naming the run, not drawn on MSE axes.
	acc := filepath.Join(root, "om-seed1")
	if err := resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1).Write(acc); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	err := dispatch([]string{"tradeoff", "-out", other, root}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), acc) || !strings.Contains(err.Error(), "accuracy") {
		t.Errorf("tradeoff of accuracy runs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "cvar_table.md")); err == nil {
		t.Error("tradeoff of accuracy runs wrote cvar_table.md")
	}
}
