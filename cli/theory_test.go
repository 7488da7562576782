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

	// A mix of metrics is refused, naming a run of each, before anything
	// is written.
	accRoot := t.TempDir()
	acc := filepath.Join(accRoot, "om-seed1")
	if err := resultstest.NewAccuracy("om", "maml", "second", 1, 1, 1).Write(acc); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "mixed")
	err := dispatch([]string{"tradeoff", "-out", other, root, accRoot}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), acc+" measures accuracy") || !strings.Contains(err.Error(), root+string(filepath.Separator)) ||
		!strings.Contains(err.Error(), "measures MSE") {
		t.Errorf("tradeoff of MSE and accuracy runs: %v", err)
	}
	if _, err := os.Stat(other); err == nil {
		t.Error("the refused tradeoff created its output directory")
	}
}

// TestTradeoffCommandAccuracy draws the trade-off of accuracy runs (MAML
// and TR-MAML, two seeds each, CVaR_0.5 listed) in percent: the table's
// values in percent under a caption naming the unit (NewAccuracy's level 1:
// meta-test mean 75%, worst 60%, CVaR_0.5 65%; meta-training 87.6%, 70%,
// 80%), the CSVs in stored fractions, the figure with percent ticks.
func TestTradeoffCommandAccuracy(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for seed := uint64(1); seed <= 2; seed++ {
		for _, s := range []resultstest.Spec{
			resultstest.NewAccuracy("m", "maml", "second", seed, 1, 1),
			resultstest.NewAccuracy("tr", "trmaml", "second", seed, 1, 0.5),
		} {
			s.Config.Eval.CVaRAlpha = []float64{0.5}
			if err := s.Write(filepath.Join(root, fmt.Sprintf("%s-seed%d", s.Config.Name, seed))); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"tradeoff", "-format", "svg", "-out", out, root}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, c := range []struct{ file, want string }{
		{"cvar_table.md", "Final alphabet accuracy in % (mean over seeds"},
		{"cvar_table.md", "| MAML | 2 | 75.00 ± 0.00 | 60.00 ± 0.00 | 65.00 ± 0.00 | 87.60 ± 0.00 | 70.00 ± 0.00 | 80.00 ± 0.00 |"},
		{"cvar_table.md", "| TR-MAML | 2 | 87.50 ± 0.00 | 80.00 ± 0.00 | 82.50 ± 0.00 | 93.80 ± 0.00 | 85.00 ± 0.00 | 90.00 ± 0.00 |"},
		{"cvar_table.csv", ",test_cvar0.5,test_cvar0.5_ci95,unfinished\n"},
		{"cvar_table.csv", ",maml,second,m,2,0.75,0,0.6,0,"},
		{"cvar_seeds.csv", "\nMAML,1,0.75,0.6,0.876,0.7,"},
		{"cvar_seeds.csv", "\nTR-MAML,2,0.875,0.8,0.938,0.85,"},
		{"cvar_paired.md", "| TR-MAML | 2 | +6.20 ± 0.00 | +15.00 ± 0.00 | +10.00 ± 0.00 | +12.50 ± 0.00 | +20.00 ± 0.00 | +17.50 ± 0.00 |"},
		{"cvar_tradeoff.svg", ">worst alphabet accuracy</text>"},
		{"cvar_tradeoff.svg", ">80%</text>"},
	} {
		if got := mustRead(t, filepath.Join(out, c.file)); !strings.Contains(got, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.file, c.want, got)
		}
	}
	if !strings.Contains(stdout.String(), "75.00 ± 0.00") {
		t.Errorf("tradeoff printed no table in percent:\n%s", stdout.String())
	}
}
