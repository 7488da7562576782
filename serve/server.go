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
	"strconv"
	"sync"
	"syscall"

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
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("serve: %s does not exist (give a run directory or a folder of runs)", r)
		} else if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
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

func (s *Server) runs(w http.ResponseWriter, _ *http.Request) {
	runs, err := s.List()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, map[string]any{"roots": s.roots, "runs": runs})
}

// Curves is one run's data for the page: metrics.csv by column (NaN as
// null), p.csv, tasks.csv, and the final per-task values of a finished run.
type Curves struct {
	Iterations []int                 `json:"iterations"`
	Columns    map[string][]*float64 `json:"columns"`
	P          *rundir.PHistory      `json:"p,omitempty"`
	// Tasks is tasks.csv, every task's value at each evaluation, for runs
	// that record it: the page's per-task curves, live.
	Tasks   *rundir.TaskHistory `json:"tasks,omitempty"`
	PerTask *PerTask            `json:"per_task,omitempty"`
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
	for _, cv := range t.CVaR {
		for set, values := range map[string][]float64{"train": cv.Train, "test": cv.Test} {
			vs := make([]*float64, len(values))
			for i, v := range values {
				vs[i] = finite(v)
			}
			c.Columns[fmt.Sprintf("%s_cvar%g", set, cv.Alpha)] = vs
		}
	}
	if p, err := rundir.ReadP(filepath.Join(dir, rundir.PFile)); err == nil {
		c.P = &p
	} else if !errors.Is(err, fs.ErrNotExist) {
		c.Errors = append(c.Errors, err.Error())
	}
	if h, err := rundir.ReadTasks(filepath.Join(dir, rundir.TasksFile)); err == nil {
		c.Tasks = &h
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
// program holds with a message that names it, and an address other than
// HOST:PORT with a numeric port: net.Listen would take "" as every
// interface at any free port and a service name as its port.
func Listen(addr string) (net.Listener, error) {
	_, port, err := net.SplitHostPort(addr)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		return nil, fmt.Errorf("serve: -addr %q: want HOST:PORT with PORT a number from 0 to 65535 (e.g. 127.0.0.1:8080; port 0: any free port)", addr)
	}
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
