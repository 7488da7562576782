package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

func evaluate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("run", "", "run directory written by trmaml train")
	seed := fs.Uint64("seed", 0, "evaluation seed (default: the run's own, reproducing result.json)")
	var sets setFlags
	fs.Var(&sets, "set", "evaluate under a changed `FIELD=VALUE` (repeatable): eval.* fields, "+strings.Join(configs.EvalFields(), ", ")+"; written to evaluation-CHANGES.json")
	opts := dataFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("eval: give exactly -run DIR")
	}
	noteBLAS(stderr)
	res, err := run.Evaluate(context.Background(), *dir, *seed, *opts, sets...)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	if t := res.Timing; t.EvalSeconds > 0 {
		cpu := ""
		if t.CPU != nil {
			cpu = fmt.Sprintf(", %.1f s of CPU", t.CPU.EvalSeconds)
		}
		fmt.Fprintf(stdout, "%d instances in %.1f s%s: %.0f instances per second (%s, GOMAXPROCS %d)\n",
			t.EvalInstances, t.EvalSeconds, cpu, float64(t.EvalInstances)/t.EvalSeconds, t.Engine, t.Procs)
	}
	fmt.Fprintf(stdout, "written to %s\n", filepath.Join(*dir, rundir.EvalFileFor(sets)))
	return nil
}
