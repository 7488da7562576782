package experiment

import (
	"io"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/slurm"
)

// Submit submits the cells of grid (an experiment in out) that are neither
// finished, nor running, nor queued by an earlier submission, as req asks
// (slurm.SubmitGrid): it fills in req's cells and the engine's cost model,
// which builds each cell's objective with opts.
func Submit(req slurm.Request, out string, grid []Job, opts run.Options, stdout io.Writer) error {
	req.Engine = slurm.Engine{
		FLOPs: func(c configs.Config) (float64, error) {
			s, err := run.Build(c, opts)
			if err != nil {
				return 0, err
			}
			return s.Objective.FLOPs(), nil
		},
		FastBuild: graph.BLASCore() != "",
	}
	if err := req.Check(); err != nil {
		return err
	}
	if err := CheckOut(out, grid); err != nil {
		return err
	}
	cells, err := Cells(grid)
	if err != nil {
		return err
	}
	for _, c := range cells {
		req.Cells = append(req.Cells, slurm.Cell{Index: c.Index, Config: c.Job.Config, Dir: c.Job.Dir,
			Finished: c.State == Finished, Running: c.State == Running})
	}
	return slurm.SubmitGrid(req, stdout)
}
