package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
)

// tradeoffCmd is "trmaml tradeoff [-runs DIR]... -out DIR [DIR...]": the
// trade-off between mean and worst-task score (loss or accuracy) of the
// finished runs (MAML, TR-MAML, entropic TR-MAML, the robust methods and
// CVaR levels), written to cvar_tradeoff.png (-format, -width) and its
// table to cvar_table.md and cvar_table.csv in -out, with every run's own
// values (and how long it stayed on the initial plateau) in
// cvar_seeds.csv, and each method's differences from MAML paired by seed
// in cvar_paired.md (when there are MAML runs to pair with). The runs must
// all measure one metric.
func tradeoffCmd(args []string, stdout, stderr io.Writer) error {
	var fig figureFlags
	groups, out, release, err := groupsAndOut("tradeoff", "directory for cvar_tradeoff.png, cvar_table.md, cvar_paired.md, cvar_table.csv and cvar_seeds.csv (required)", args, stderr, &fig, false, oneMetric)
	if err != nil {
		return err
	}
	defer release()
	png := fig.file(out, "cvar_tradeoff")
	if err := plots.CVaRTradeoff(groups, png, fig.width); err != nil {
		return err
	}
	md := results.TradeoffMarkdown(groups)
	if err := atomicfile.Write(filepath.Join(out, "cvar_table.md"), []byte(md)); err != nil {
		return err
	}
	tab, err := results.Table(groups)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(out, "cvar_table.csv"), []byte(tab.CSV())); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(out, "cvar_seeds.csv"), []byte(results.TradeoffSeedsCSV(groups))); err != nil {
		return err
	}
	wrote := "cvar_table.md, cvar_table.csv and cvar_seeds.csv"
	if paired := results.PairedMarkdown(groups, "maml"); paired != "" {
		if err := atomicfile.Write(filepath.Join(out, "cvar_paired.md"), []byte(paired)); err != nil {
			return err
		}
		md += "\n" + paired
		wrote = "cvar_table.md, cvar_paired.md, cvar_table.csv and cvar_seeds.csv"
	}
	fmt.Fprintf(stdout, "%s\nwrote %s, %s\n", md, png, wrote)
	return nil
}

// oneMetric refuses groups of more than one metric, naming a run of each
// of the first two: one figure's axes and one table's units are those of
// one metric.
func oneMetric(groups []*results.Group) error {
	if parts := results.SplitByScore(groups); len(parts) > 1 {
		a, b := parts[0][0], parts[1][0]
		return fmt.Errorf("tradeoff: %s measures %s but %s measures %s: the trade-off is drawn in one metric; call tradeoff once per metric",
			a.Runs[0].Dir, a.Score.Label, b.Runs[0].Dir, b.Score.Label)
	}
	return nil
}
