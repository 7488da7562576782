package cli

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/trmaml/trmaml/results"
)

// compareCmd is "trmaml compare [-runs] A B": the final statistics and cost
// of two run directories side by side, with the difference B - A, in the
// runs' metric (which must be the same).
func compareCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var runs dirList
	fs.Var(&runs, "runs", "run directory (give two, as -runs A B or A B)")
	dirs, err := parseRunArgs(fs, &runs, args)
	if err != nil {
		return err
	}
	if len(dirs) != 2 {
		return fmt.Errorf("compare: give exactly two run directories, got %d", len(dirs))
	}
	a, err := results.Load(dirs[0])
	if err != nil {
		return err
	}
	b, err := results.Load(dirs[1])
	if err != nil {
		return err
	}
	if a.Score != b.Score {
		return fmt.Errorf("compare: %s measures %s but %s measures %s", a.Dir, a.Score.Label, b.Dir, b.Score.Label)
	}
	describe := func(r *results.Run) string {
		k := results.KeyOf(r)
		return fmt.Sprintf("%s %s-order %s seed %d", results.AlgorithmName(k.Algorithm), k.Order, k.Shots(), r.Config.Seed)
	}
	rows := [][4]string{
		{"", "A", "B", "B - A"},
		{"run", filepath.Base(a.Dir), filepath.Base(b.Dir), ""},
		{"setting", describe(a), describe(b), ""},
		{"iterations", fmt.Sprint(a.Result.Iterations), fmt.Sprint(b.Result.Iterations), ""},
		{"metric", a.Score.Axis(""), b.Score.Axis(""), ""},
	}
	for _, row := range []struct {
		name string
		stat results.Final
	}{
		{"meta-test mean", results.MetaTestMean},
		{"meta-test worst", results.MetaTestWorst},
		{"meta-test std", results.MetaTestStd},
		{"meta-train mean", results.MetaTrainMean},
		{"meta-train weighted mean", results.MetaTrainWeightedMean},
		{"meta-train worst", results.MetaTrainWorst},
		{"meta-train std", results.MetaTrainStd},
		{"ms per iteration", results.MsPerIteration},
	} {
		va, vb := row.stat.Value(&a.Result), row.stat.Value(&b.Result)
		if row.stat != results.MsPerIteration {
			va, vb = a.Score.Show(va), b.Score.Show(vb)
		}
		rows = append(rows, [4]string{row.name, fmt.Sprintf("%.4f", va), fmt.Sprintf("%.4f", vb), fmt.Sprintf("%+.4f", vb-va)})
	}
	rows = append(rows, [4]string{"meta-test worst task", a.Result.MetaTest.WorstTask, b.Result.MetaTest.WorstTask, ""})
	// Names left-aligned (padded to one width), values right-aligned.
	nameWidth := 0
	for _, r := range rows {
		nameWidth = max(nameWidth, len(r[0]))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t\n", nameWidth, r[0], r[1], r[2], r[3])
	}
	return tw.Flush()
}
