package results

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/trmaml/trmaml/internal/atomicfile"
)

// WriteReport writes the report's tables of groups into dir, noting on log
// each table (printed in full) and file it writes: table.md and table.csv
// (Table 1's layout for MSE runs, Table 2's meta-training and meta-test
// layout for accuracy runs; with runs of both metrics, table_mse.* and
// table_accuracy.*), per_task.md and per_task.csv, every group's final
// value on every task with its name (mean over seeds with its 95% CI),
// per_task_seeds.csv, every run's, from which every statistic of the tables
// can be recomputed, and, when a run's method moves p, p_travel.md: how far
// and when p moved from its start.
func WriteReport(groups []*Group, dir string, log io.Writer) error {
	parts := SplitByScore(groups)
	for _, part := range parts {
		var t interface {
			Markdown() string
			CSV() string
		}
		var err error
		if part[0].Score.HigherIsBetter {
			t, err = NewTrainTestTable(part)
		} else {
			t, err = Table(part)
		}
		if err != nil {
			return err
		}
		md, csv := t.Markdown(), t.CSV()
		suffix := ""
		if len(parts) > 1 {
			suffix = "_" + part[0].Score.Name
		}
		mdPath, csvPath := filepath.Join(dir, "table"+suffix+".md"), filepath.Join(dir, "table"+suffix+".csv")
		if err := atomicfile.Write(mdPath, []byte(md)); err != nil {
			return err
		}
		if err := atomicfile.Write(csvPath, []byte(csv)); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s\nwritten to %s and %s\n", md, mdPath, csvPath)
		// Per-task values are of the finished runs: unfinished ones
		// have none yet.
		fin := FinishedGroups(part)
		if len(fin) == 0 {
			continue
		}
		perTask, err := PerTaskMarkdown(fin)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(dir, "per_task"+suffix+".md"), []byte(perTask)); err != nil {
			return err
		}
	}
	fin := FinishedGroups(groups)
	if len(fin) == 0 {
		return nil
	}
	perTask, perRun := filepath.Join(dir, "per_task.csv"), filepath.Join(dir, "per_task_seeds.csv")
	if err := atomicfile.Write(perTask, []byte(PerTaskCSV(fin))); err != nil {
		return err
	}
	if err := atomicfile.Write(perRun, []byte(PerRunCSV(fin))); err != nil {
		return err
	}
	fmt.Fprintf(log, "per-task values written to %s (Markdown: per_task.md), each seed's to %s\n", perTask, perRun)
	if moving := MovingP(groups); len(moving) > 0 {
		travel, err := PTravelMarkdown(moving, StepP)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "p_travel.md")
		if err := atomicfile.Write(path, []byte(travel)); err != nil {
			return err
		}
		fmt.Fprintf(log, "how far p moved from its start in each run: %s\n", path)
	}
	return nil
}
