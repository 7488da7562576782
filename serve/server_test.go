package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/internal/treetest"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
)

// quickRun trains a short sinusoid run into dir.
func quickRun(t *testing.T, dir, algorithm string) {
	t.Helper()
	cfg, err := configs.Builtin("sine_quick")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Algorithm = algorithm
	cfg.Meta.Iterations, cfg.Eval.Every, cfg.Eval.Instances, cfg.Eval.TrainInstances = 200, 100, 490, 100
	cfg.Eval.CVaRAlpha = []float64{0.9}
	if _, err := run.Train(context.Background(), cfg, dir, run.Options{}); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, h http.Handler, path string, out any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if out != nil && rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
	}
	return rec.Code
}

// served serves the runs under root and returns the server and what
// /api/runs lists.
func served(t *testing.T, root string) (*Server, struct{ Runs []Run }) {
	t.Helper()
	s, err := New([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Runs []Run }
	if code := get(t, s, "/api/runs", &list); code != http.StatusOK {
		t.Fatalf("/api/runs: %d", code)
	}
	return s, list
}

// TestListStatesAsStatus serves a folder with a finished run, an
// interrupted one, a damaged one, a run held by a process (training) and
// a finished one held (read by trmaml eval), and checks
// each state and reason against experiment.Cells (what trmaml status
// prints), that the served curves are metrics.csv's, and that serving
// changed no byte and made no file in the runs.
func TestListStatesAsStatus(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a/trmaml", "a/maml", "damaged", "held", "reading", "stopped"} {
		alg := "trmaml"
		if strings.HasSuffix(name, "maml") && !strings.HasSuffix(name, "trmaml") {
			alg = "maml"
		}
		quickRun(t, filepath.Join(root, name), alg)
	}
	metrics := filepath.Join(root, "damaged", rundir.MetricsFile)
	raw, _ := os.ReadFile(metrics)
	os.WriteFile(metrics, bytes.Replace(raw, []byte("200,"), []byte("201,"), 1), 0o644)
	os.Remove(filepath.Join(root, "stopped", rundir.ResultFile))
	os.Remove(filepath.Join(root, "held", rundir.ResultFile))        // still training
	os.MkdirAll(filepath.Join(root, experiment.SchedulerDir), 0o755) // not a run
	for _, name := range []string{"held", "reading"} {
		lock, err := dirlock.Acquire(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Release()
	}
	before := treetest.Of(t, root)

	s, list := served(t, root)
	var jobs []experiment.Job
	for _, r := range list.Runs {
		cfg, err := configs.Load(filepath.Join(r.Dir, rundir.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, experiment.Job{Config: cfg, Dir: r.Dir})
	}
	cells, err := experiment.Cells(jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]experiment.State{"a/maml": experiment.Finished, "a/trmaml": experiment.Finished,
		"damaged": experiment.Damaged, "held": experiment.Running, "reading": experiment.Finished, "stopped": experiment.Damaged}
	if len(list.Runs) != len(want) {
		t.Fatalf("listed %d runs, want %d: %+v", len(list.Runs), len(want), list.Runs)
	}
	for i, r := range list.Runs {
		if r.State != string(want[r.Name]) || r.State != string(cells[i].State) {
			t.Errorf("%s: state %q, want %q (status: %q)", r.Name, r.State, want[r.Name], cells[i].State)
		}
		if r.State == string(experiment.Damaged) && (r.Detail != cells[i].Detail || r.Detail == "") {
			t.Errorf("%s: reason %q, status says %q", r.Name, r.Detail, cells[i].Detail)
		}
		if r.Name != "damaged" && r.Iteration != 200 || r.Total != 200 || r.TestMean == nil || r.Metric != "mse" {
			t.Errorf("%s: iteration %d/%d, test mean %v, metric %q", r.Name, r.Iteration, r.Total, r.TestMean, r.Metric)
		}
	}
	res, err := rundir.ReadResult(filepath.Join(list.Runs[0].Dir, rundir.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Runs[0].CVaR; len(got) != 1 || got[0] != res.MetaTest.CVaR[0] {
		t.Errorf("a/maml: CVaR %v, result.json has %v", got, res.MetaTest.CVaR)
	}
	// A running run's CVaR is its last evaluation's.
	held := list.Runs[slices.IndexFunc(list.Runs, func(r Run) bool { return r.Name == "held" })]
	m, err := rundir.ReadMetrics(filepath.Join(held.Dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := held.CVaR, m.CVaR[0]; len(got) != 1 || got[0].Alpha != want.Alpha || got[0].Value != want.Test[len(want.Test)-1] {
		t.Errorf("held: CVaR %v, metrics.csv's last row has %v", got, want)
	}
	if got := list.Runs[0].Config["algorithm"]; got != "maml" {
		t.Errorf("a/maml: swept algorithm %q, want maml (config %v)", got, list.Runs[0].Config)
	}
	for _, r := range list.Runs {
		if strings.Contains(r.Detail, "pid") {
			t.Errorf("%s: the page shows the lock holder %q", r.Name, r.Detail)
		}
	}

	var c Curves
	dir := filepath.Join(root, "a", "trmaml")
	if code := get(t, s, "/api/run?dir="+url.QueryEscape(dir), &c); code != http.StatusOK {
		t.Fatalf("/api/run: %d", code)
	}
	table, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Iterations) != 3 || c.Columns["batch_mean"][0] != nil || *c.Columns["test_worst"][2] != table.Values[rundir.TestWorst][2] {
		t.Errorf("curves %v differ from metrics.csv %v", c, table)
	}
	if len(table.CVaR) != 1 {
		t.Fatalf("metrics.csv has CVaR columns %+v, want the run's one level", table.CVaR)
	}
	if cv := c.Columns[fmt.Sprintf("test_cvar%g", table.CVaR[0].Alpha)]; len(cv) != 3 || *cv[2] != table.CVaR[0].Test[2] {
		t.Errorf("curves' test CVaR %v, metrics.csv %v", cv, table.CVaR[0].Test)
	}
	if c.P == nil || len(c.P.Weights) != 3 || c.PerTask == nil || len(c.PerTask.Test.PerTask) == 0 {
		t.Errorf("p %v, per task %v", c.P, c.PerTask)
	}
	if c.Tasks == nil || len(c.Tasks.Iterations) != 3 || len(c.Tasks.TestValues[2]) != len(c.PerTask.Test.PerTask) || slices.Max(c.Tasks.TestValues[2]) != *c.Columns["test_worst"][2] {
		t.Errorf("tasks %v: want tasks.csv's rows, one value per meta-test task, the worst metrics.csv's", c.Tasks)
	}
	for _, bad := range []string{"/etc", root, filepath.Join(root, "a")} {
		if code := get(t, s, "/api/run?dir="+url.QueryEscape(bad), nil); code != http.StatusNotFound {
			t.Errorf("/api/run?dir=%s: %d, want 404", bad, code)
		}
	}
	if code := get(t, s, "/", nil); code != http.StatusOK {
		t.Errorf("/: %d", code)
	}
	// Listed again, unchanged runs come from the cache; a run damaged
	// since is checked again.
	again, err := s.List()
	if err != nil || len(again) != len(list.Runs) || again[0].State != list.Runs[0].State {
		t.Fatalf("second listing %v, %v", again, err)
	}
	if diff := before.Diff(treetest.Of(t, root)); diff != "" {
		t.Errorf("serving changed the runs:\n%s", diff)
	}
	p := filepath.Join(root, "a", "maml", rundir.PFile)
	raw, _ = os.ReadFile(p)
	os.WriteFile(p, append(raw, '\n'), 0o644)
	if again, _ := s.List(); again[0].State != string(experiment.Damaged) || !strings.Contains(again[0].Detail, rundir.PFile) {
		t.Errorf("a/maml damaged after the first listing: %s, %q", again[0].State, again[0].Detail)
	}
}

// TestPeekHolderSeesFlock checks the lock look-up against a lock taken
// and released, and the parsing of /proc/locks lines.
func TestPeekHolderSeesFlock(t *testing.T) {
	dir := t.TempDir()
	if _, held, err := peekHolder(dir); held || err != nil {
		t.Fatalf("no lock file: held %v, %v", held, err)
	}
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(procLocks); err != nil {
		t.Skipf("no %s here: only the fallback works", procLocks)
	}
	name, held, err := peekHolder(dir)
	if !held || err != nil || !strings.Contains(name, "pid") {
		t.Errorf("held lock: %q %v %v", name, held, err)
	}
	l.Release()
	if _, held, _ := peekHolder(dir); held {
		t.Error("released lock still held")
	}
	// A killed holder's name stays in the file, but no lock: not held.
	os.WriteFile(filepath.Join(dir, dirlock.Name), []byte("pid 1 on elsewhere, \"trmaml train\"\n"), 0o644)
	if _, held, _ := peekHolder(dir); held {
		t.Error("a stale name counted as held")
	}
	for _, c := range []struct {
		table    string
		dev, ino uint64
		want     bool
	}{
		{"1: FLOCK  ADVISORY  WRITE 17625 fe:00:5317953 0 EOF\n", 0xfe00, 5317953, true},
		{"1: FLOCK  ADVISORY  WRITE 17625 fe:00:5317953 0 EOF\n", 0xfe01, 5317953, false},
		{"1: FLOCK  ADVISORY  WRITE 17625 fe:00:5317953 0 EOF\n", 0xfe00, 5317954, false},
		{"1: -> FLOCK  ADVISORY  WRITE 17625 fe:00:5317953 0 EOF\n", 0xfe00, 5317953, false},
		{"2: POSIX  ADVISORY  WRITE 99 103:02:42 0 EOF\n", 0x10302, 42, true},
		{"", 0, 0, false},
	} {
		if got := locked(c.table, c.dev, c.ino); got != c.want {
			t.Errorf("locked(%q, %#x, %d) = %v, want %v", c.table, c.dev, c.ino, got, c.want)
		}
	}
}

// TestListenPortInUse refuses a taken port, naming it.
func TestListenPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	_, err = Listen(l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "port "+port+" is in use") {
		t.Errorf("Listen on a taken port: %v", err)
	}
}

// TestListenRefusesMalformedAddr: an address that is not HOST:PORT with a
// numeric port is refused, naming the flag and what it wants, instead of
// being read by net.Listen (which takes "" as every interface at any port
// and a service name such as "http" as its port).
func TestListenRefusesMalformedAddr(t *testing.T) {
	want := "want HOST:PORT with PORT a number from 0 to 65535"
	for _, addr := range []string{"", "foo", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:-1", ":abc", "localhost:http", "127.0.0.1:8080:1"} {
		l, err := Listen(addr)
		if err == nil {
			l.Close()
			t.Errorf("Listen(%q) accepted, at %s", addr, l.Addr())
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("-addr %q", addr)) || !strings.Contains(err.Error(), want) {
			t.Errorf("Listen(%q): %v, want it to name the flag's value and say %q", addr, err, want)
		}
	}
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen(127.0.0.1:0): %v", err)
	}
	l.Close()
}

// TestDiscoverFollowsLinkedRoot: a root that is a symbolic link to a run
// directory or a folder of runs is searched like the directory itself (it
// was served with no runs).
func TestDiscoverFollowsLinkedRoot(t *testing.T) {
	tmp := t.TempDir()
	folder := filepath.Join(tmp, "runs")
	run := filepath.Join(folder, "a-seed1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, rundir.ConfigFile), []byte("name: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ target, link, want string }{
		{folder, filepath.Join(tmp, "folder-link"), filepath.Join(tmp, "folder-link", "a-seed1")},
		{run, filepath.Join(tmp, "run-link"), filepath.Join(tmp, "run-link")},
	} {
		rel, err := filepath.Rel(tmp, c.target) // as ln -s makes it
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(rel, c.link); err != nil {
			t.Fatal(err)
		}
		dirs, err := discover([]string{c.link})
		if err != nil || !slices.Equal(dirs, []string{c.want}) {
			t.Errorf("discover(%s) = %v, %v; want [%s]", c.link, dirs, err, c.want)
		}
	}
}

// TestNewMissingRoot: a root that does not exist is refused by name.
func TestNewMissingRoot(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-runs")
	if _, err := New([]string{missing}); err == nil || err.Error() != "serve: "+missing+" does not exist (give a run directory or a folder of runs)" {
		t.Errorf("New: %v", err)
	}
}
