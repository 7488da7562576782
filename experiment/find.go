package experiment

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
)

// Find returns the jobs of dir, a run directory or an experiment
// directory: the run itself (refused with an experiment file spec); else
// the grid of the experiment file spec (default: the one last submitted to
// Slurm into dir, if any); else the run directories dir holds, in name order (one whose config.yaml cannot be
// read among them, for Cells to report as damaged). A sealed run
// directory that lost its config.yaml is refused, naming what is missing.
func Find(dir, spec string) ([]Job, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ConfigFile)); err == nil {
		if spec != "" {
			return nil, fmt.Errorf("%s is a run directory (it holds %s): the experiment file %s lists the cells of an experiment directory; give the run alone, or the experiment's directory", dir, rundir.ConfigFile, spec)
		}
		cfg, err := configs.LoadRecorded(filepath.Join(dir, rundir.ConfigFile))
		if err != nil {
			return nil, err
		}
		return []Job{{Config: cfg, Dir: dir}}, nil
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.ManifestFile)); err == nil {
		// A sealed run directory whose config.yaml is gone: the
		// manifest check names it.
		if _, err := rundir.Verify(dir); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %s is missing", dir, rundir.ConfigFile)
	}
	if spec == "" {
		if p := slurm.SubmittedJobs(filepath.Join(dir, SchedulerDir))["config"]; len(p) > 0 {
			spec = p[len(p)-1]
		}
	}
	var grid []Job
	if spec != "" {
		_, cfgs, err := Expand(spec) // no data needed to list cells
		if err != nil {
			return nil, err
		}
		grid = Jobs(cfgs, dir)
	} else {
		var err error
		if grid, err = present(dir); err != nil {
			return nil, err
		}
	}
	if len(grid) == 0 {
		return nil, fmt.Errorf("%s holds no run directories (give -config FILE to list the cells of an experiment not started)", dir)
	}
	return grid, nil
}

// present are the run directories in dir, in name order, when the grid
// is not known.
func present(dir string) ([]Job, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for _, e := range entries {
		p := filepath.Join(dir, e.Name(), rundir.ConfigFile)
		if !e.IsDir() {
			continue
		}
		if !fileExists(p) {
			continue // not a run directory
		}
		cfg, err := configs.LoadRecorded(p)
		jobs = append(jobs, Job{Config: cfg, Dir: filepath.Join(dir, e.Name()), unreadable: err})
	}
	return jobs, nil
}
