package serve

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
)

//go:embed page.html
var page []byte

// Server serves the page and its data over the run directories found
// under its roots, looked for again at every request: runs that start
// while it serves appear.
type Server struct {
	roots []string
	mux   *http.ServeMux

	mu   sync.Mutex
	seen map[string]seenRun // by directory
}

// seenRun is a run as List last described it, with its directory's
// fingerprint then: an idle run's manifest check hashes its files, which
// the page's polling must not redo every two seconds for runs that have
// not changed.
type seenRun struct {
	print string
	run   Run
}

// New returns the server over roots, each a run directory or a directory
// searched for run directories; each must exist.
func New(roots []string) (*Server, error) {
	if len(roots) == 0 {
		return nil, errors.New("serve: give at least one run directory or folder of runs")
	}
	for _, r := range roots {
		st, err := os.Stat(r)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("serve: %s is not a directory", r)
		}
	}
	s := &Server{roots: roots, mux: http.NewServeMux(), seen: map[string]seenRun{}}
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	s.mux.HandleFunc("GET /api/runs", s.runs)
	s.mux.HandleFunc("GET /api/run", s.run)
	return s, nil
}

// ServeHTTP serves the page (/), the list of runs (/api/runs) and one
// run's curves (/api/run?dir=DIR).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

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
	// CVaR is a finished run's meta-test CVaR at its eval.cvar_alpha
	// levels, from result.json (none without levels).
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
	return runs, nil
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
	if c.State == experiment.Running {
		r.Detail = "" // the lock holder's pid and command: not for the page
	}
	if c.State == experiment.Interrupted && c.Checkpoint >= 0 {
		r.Detail = fmt.Sprintf("checkpoint at iteration %d/%d", c.Checkpoint, r.Total)
	}
	if t, err := rundir.ReadMetrics(filepath.Join(r.Dir, rundir.MetricsFile)); err == nil && len(t.Iterations) > 0 {
		last := len(t.Iterations) - 1
		r.Iteration = t.Iterations[last]
		r.TestMean, r.TestWorst = finite(t.Values[rundir.TestMean][last]), finite(t.Values[rundir.TestWorst][last])
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
// directories are searched, except the scheduler's and hidden ones.
func discover(roots []string) ([]string, error) {
	var dirs []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
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

func (s *Server) runs(w http.ResponseWriter, _ *http.Request) {
	runs, err := s.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"roots": s.roots, "runs": runs})
}

// Curves is one run's data for the page: metrics.csv by column (NaN as
// null), p.csv, and the final per-task values of a finished run.
type Curves struct {
	Iterations []int                 `json:"iterations"`
	Columns    map[string][]*float64 `json:"columns"`
	P          *rundir.PHistory      `json:"p,omitempty"`
	PerTask    *PerTask              `json:"per_task,omitempty"`
	// Errors name a file that could not be read, with the reason.
	Errors []string `json:"errors,omitempty"`
}

// PerTask is a finished run's meta-test and meta-train per-task values.
type PerTask struct {
	Test  rundir.Stats `json:"test"`
	Train rundir.Stats `json:"train"`
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("dir")
	dirs, err := discover(s.roots)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !slices.Contains(dirs, dir) { // only the listed runs' files are served
		http.Error(w, fmt.Sprintf("%q is not a run directory served here", dir), http.StatusNotFound)
		return
	}
	var c Curves
	t, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		c.Errors = append(c.Errors, err.Error())
	}
	c.Iterations, c.Columns = t.Iterations, map[string][]*float64{}
	if c.Iterations == nil {
		c.Iterations = []int{}
	}
	for col := range rundir.NumColumns {
		vs := make([]*float64, len(t.Iterations))
		for i, v := range t.Values[col] {
			vs[i] = finite(v)
		}
		c.Columns[col.String()] = vs
	}
	if p, err := rundir.ReadP(filepath.Join(dir, rundir.PFile)); err == nil {
		c.P = &p
	} else if !errors.Is(err, fs.ErrNotExist) {
		c.Errors = append(c.Errors, err.Error())
	}
	if exists(filepath.Join(dir, rundir.ResultFile)) {
		if res, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile)); err == nil {
			c.PerTask = &PerTask{Test: res.MetaTest, Train: res.MetaTrain}
		} else {
			c.Errors = append(c.Errors, err.Error())
		}
	}
	writeJSON(w, c)
}

// finite is v, or nil (JSON null) for NaN and infinities, which JSON
// cannot hold.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Listen opens addr (HOST:PORT) for the server, refusing a port another
// program holds with a message that names it.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		_, port, _ := net.SplitHostPort(addr)
		return nil, fmt.Errorf("serve: -addr %s: port %s is in use by another program (choose another, e.g. -addr 127.0.0.1:0 for any free port)", addr, port)
	}
	if err != nil {
		return nil, fmt.Errorf("serve: -addr %s: %w", addr, err)
	}
	return l, nil
}
