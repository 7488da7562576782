package serve

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/plots"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
	"gopkg.in/yaml.v3"
)

// Run is one run directory as the page lists it.
type Run struct {
	// Dir is the run directory's path; Name its path inside the root it
	// was found under.
	Dir  string `json:"dir"`
	Name string `json:"name"`
	// State and Detail are what trmaml status says of it: finished,
	// running, interrupted, failed or damaged, and why.
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
	// Algorithm, Order and Seed come from its config.yaml.
	Algorithm string `json:"algorithm,omitempty"`
	Order     string `json:"order,omitempty"`
	Seed      uint64 `json:"seed"`
	// Colour is the algorithm's colour in a figure of the listed runs'
	// algorithms (plots.MethodColours), "#rrggbb": the page colours runs by
	// algorithm with it.
	Colour string `json:"colour,omitempty"`
	// Metric is the score of its train and test columns; Scale turns a
	// stored value into the shown one (accuracy in percent).
	Metric         string  `json:"metric,omitempty"`
	Label          string  `json:"label,omitempty"`
	Unit           string  `json:"unit,omitempty"`
	Scale          float64 `json:"scale,omitempty"`
	HigherIsBetter bool    `json:"higher_is_better,omitempty"`
	// Iteration is the iteration of the last metrics.csv row (-1 before
	// the first), of Total.
	Iteration int `json:"iteration"`
	Total     int `json:"total"`
	// TestMean and TestWorst are the last row's meta-test mean and worst.
	TestMean  *float64 `json:"test_mean,omitempty"`
	TestWorst *float64 `json:"test_worst,omitempty"`
	// CVaR is the meta-test CVaR at the run's eval.cvar_alpha levels
	// (none without levels): a finished run's final one from result.json,
	// else the last metrics.csv row's.
	CVaR []rundir.TailStat `json:"cvar,omitempty"`
	// Config maps the config fields that differ between the listed runs
	// to this run's values: what the page can colour by.
	Config map[string]string `json:"config,omitempty"`

	flat map[string]string
}

// List finds the run directories under the server's roots and reads
// their states.
func (s *Server) List() ([]Run, error) {
	dirs, err := discover(s.roots)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := make([]Run, len(dirs))
	for i, d := range dirs {
		fp := fingerprint(d)
		if seen, ok := s.seen[d]; ok && seen.print == fp && fp != "" {
			runs[i] = seen.run
			continue
		}
		if runs[i], err = s.read(d); err != nil {
			return nil, err
		}
		s.seen[d] = seenRun{fp, runs[i]}
	}
	sweep(runs)
	colour(runs)
	return runs, nil
}

// colour sets each run's Colour to its algorithm's among the runs'
// algorithms: computed over them all, as a figure of them computes it, so
// that two methods listed together never share a colour.
func colour(runs []Run) {
	var algs []string
	for _, r := range runs {
		if r.Algorithm != "" {
			algs = append(algs, r.Algorithm)
		}
	}
	cols := plots.MethodColours(algs)
	for i, r := range runs {
		if c, ok := cols[r.Algorithm]; ok {
			runs[i].Colour = fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
		}
	}
}

// read describes the run directory d from its files.
func (s *Server) read(d string) (Run, error) {
	r := Run{Dir: d, Name: s.name(d), Iteration: -1}
	cfg, err := configs.LoadRecorded(filepath.Join(d, rundir.ConfigFile))
	if err != nil {
		// As status says it: the manifest's refusal if it has one,
		// else the config's error.
		if _, verr := rundir.Verify(d); verr != nil {
			err = verr
		}
		r.State, r.Detail = string(experiment.Damaged), err.Error()
		return r, nil
	}
	cells, err := experiment.CellsHeld([]experiment.Job{{Config: cfg, Dir: d}}, peekHolder)
	if err != nil {
		return Run{}, err
	}
	describe(&r, cells[0])
	return r, nil
}

// fingerprint is the name, size and modification time of every file in
// dir, and whether a process holds its lock ("" if any of it cannot be
// read): what List's cache of a run is valid for.
func fingerprint(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return ""
		}
		fmt.Fprintf(&b, "%s %d %d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	_, held, err := peekHolder(dir)
	if err != nil {
		return ""
	}
	fmt.Fprintf(&b, "held %v", held)
	return b.String()
}

// name is dir as the page shows it: its path inside the root it was
// found under, or its base name if it is a root.
func (s *Server) name(dir string) string {
	for _, root := range s.roots {
		if rel, err := filepath.Rel(root, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(dir)
}

// describe fills r from its cell: state, config, last metrics row.
func describe(r *Run, c experiment.Cell) {
	cfg := c.Job.Config
	r.State, r.Detail = string(c.State), c.Detail
	r.Algorithm, r.Order, r.Seed, r.Total = cfg.Algorithm, cfg.Order, cfg.Seed, cfg.Meta.Iterations
	m := results.ScoreOf(cfg)
	r.Metric, r.Label, r.Unit, r.Scale, r.HigherIsBetter = m.Name, m.Label, m.Unit, m.Scale, m.HigherIsBetter
	if c.State == experiment.Running || c.State == experiment.Finished {
		r.Detail = "" // the lock holder's pid and command, if any: not for the page
	}
	if c.State == experiment.Interrupted && c.Checkpoint >= 0 {
		r.Detail = fmt.Sprintf("checkpoint at iteration %d/%d", c.Checkpoint, r.Total)
	}
	if t, err := rundir.ReadMetrics(filepath.Join(r.Dir, rundir.MetricsFile)); err == nil && len(t.Iterations) > 0 {
		last := len(t.Iterations) - 1
		r.Iteration = t.Iterations[last]
		r.TestMean, r.TestWorst = finite(t.Values[rundir.TestMean][last]), finite(t.Values[rundir.TestWorst][last])
		for _, cv := range t.CVaR {
			r.CVaR = append(r.CVaR, rundir.TailStat{Alpha: cv.Alpha, Value: cv.Test[last]})
		}
	}
	if c.State == experiment.Finished {
		if res, err := rundir.ReadResult(filepath.Join(r.Dir, rundir.ResultFile)); err == nil {
			r.CVaR = res.MetaTest.CVaR
		}
	}
	if raw, err := yaml.Marshal(cfg); err == nil {
		r.flat = flatten(raw)
	}
}

// sweep sets each run's Config to the fields whose values differ between
// the runs (name excepted: it differs by construction).
func sweep(runs []Run) {
	keys := map[string]bool{}
	for _, r := range runs {
		for k, v := range r.flat {
			for _, o := range runs {
				if o.flat != nil && o.flat[k] != v && k != "name" {
					keys[k] = true
				}
			}
		}
	}
	for i := range runs {
		if runs[i].flat == nil {
			continue
		}
		runs[i].Config = map[string]string{}
		for k := range keys {
			runs[i].Config[k] = runs[i].flat[k]
		}
	}
}

// flatten maps a YAML document's field paths (task.sinusoid.x_min) to
// their values as YAML text.
func flatten(doc []byte) map[string]string {
	var root yaml.Node
	out := map[string]string{}
	if yaml.Unmarshal(doc, &root) != nil || len(root.Content) == 0 {
		return out
	}
	var walk func(prefix string, n *yaml.Node)
	walk = func(prefix string, n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(strings.TrimPrefix(prefix+"."+n.Content[i].Value, "."), n.Content[i+1])
			}
			return
		}
		b, _ := yaml.Marshal(n)
		out[prefix] = strings.TrimSpace(string(b))
	}
	walk("", root.Content[0])
	return out
}

// discover lists the run directories under roots, in name order: a
// directory holding config.yaml or manifest.json is one; other
// directories are searched, except the scheduler's and hidden ones. A root
// that is a symbolic link is searched as its target.
func discover(roots []string) ([]string, error) {
	var dirs []string
	for _, root := range roots {
		walk := root
		if l, err := os.Lstat(root); err == nil && l.Mode()&fs.ModeSymlink != 0 {
			walk += string(filepath.Separator) // WalkDir does not follow a root that is a link
		}
		err := filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path == walk {
				path = root
			}
			if !d.IsDir() {
				return nil
			}
			if path != root && (d.Name() == experiment.SchedulerDir || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if exists(filepath.Join(path, rundir.ConfigFile)) || exists(filepath.Join(path, rundir.ManifestFile)) {
				dirs = append(dirs, path)
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(dirs)
	return slices.Compact(dirs), nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
