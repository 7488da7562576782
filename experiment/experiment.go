// Package experiment runs a grid of training runs (algorithms x orders x
// seeds over one base config) with a pool of workers, one line of progress
// per active run and an overall ETA. Re-running an experiment resumes it:
// finished runs are skipped and unfinished ones continue from their
// checkpoints.
package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
)

// Spec is an experiment file.
type Spec struct {
	// Name identifies the experiment; runs are named NAME-ALGORITHM-ORDER.
	Name string `yaml:"name"`
	// Base is the config every run starts from: a path relative to the
	// experiment file, or the name of a built-in config.
	Base string `yaml:"base"`
	// Algorithms, Orders and Seeds span the grid.
	Algorithms []string `yaml:"algorithms"`
	Orders     []string `yaml:"orders"`
	Seeds      []uint64 `yaml:"seeds"`
	// CVaRLevels, if not empty, runs algorithm cvar once per level a in
	// (0, 1] (overriding the base config's cvar.level); runs are named
	// NAME-cvarA-ORDER.
	CVaRLevels []float64 `yaml:"cvar_levels"`
	// Iterations, if not zero, overrides the base config's meta.iterations.
	Iterations int `yaml:"iterations"`
}

// Job is one run of the grid.
type Job struct {
	Config configs.Config
	Dir    string
}

// Load reads an experiment file strictly (unknown keys and wrong types are
// refused with file and line) and expands it into configs.
func Load(path string) (Spec, []configs.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	var spec Spec
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		return Spec{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	var lines yaml.Node
	if err := yaml.Unmarshal(raw, &lines); err != nil {
		return Spec{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	where := func(field string) string {
		if len(lines.Content) > 0 {
			m := lines.Content[0]
			for i := 0; i+1 < len(m.Content); i += 2 {
				if m.Content[i].Value == field {
					return fmt.Sprintf("%s:%d", path, m.Content[i].Line)
				}
			}
		}
		return path
	}
	var errs []error
	check := func(field string, ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s: %s", where(field), field, fmt.Sprintf(format, args...)))
		}
	}
	check("name", spec.Name != "" && !strings.ContainsAny(spec.Name, `/\ `), "must be a non-empty name without slashes or spaces")
	check("base", spec.Base != "", "must name a config file (relative to the experiment file) or a built-in config %v", configs.BuiltinNames())
	check("algorithms", len(spec.Algorithms) > 0 && allIn(spec.Algorithms, configs.Algorithms...), "must list some of %v, got %v", configs.Algorithms, spec.Algorithms)
	check("orders", len(spec.Orders) > 0 && allIn(spec.Orders, "second", "first"), "must list second and/or first, got %v", spec.Orders)
	check("seeds", len(spec.Seeds) > 0, "must list at least one seed")
	check("algorithms", unique(spec.Algorithms), "must not repeat an entry, got %v", spec.Algorithms)
	check("orders", unique(spec.Orders), "must not repeat an entry, got %v", spec.Orders)
	check("seeds", unique(spec.Seeds), "must not repeat a seed (runs would share a directory), got %v", spec.Seeds)
	check("cvar_levels", len(spec.CVaRLevels) == 0 || slices.Contains(spec.Algorithms, "cvar"), "needs cvar among the algorithms")
	check("cvar_levels", unique(spec.CVaRLevels), "must not repeat a level, got %v", spec.CVaRLevels)
	for _, a := range spec.CVaRLevels {
		check("cvar_levels", a > 0 && a <= 1, "each level must be in (0, 1], got %v", a)
	}
	check("iterations", spec.Iterations >= 0, "must be >= 0 (0 keeps the base config's), got %d", spec.Iterations)
	if err := errors.Join(errs...); err != nil {
		return Spec{}, nil, err
	}

	var base configs.Config
	if p := filepath.Join(filepath.Dir(path), spec.Base); fileExists(p) {
		base, err = configs.Load(p)
	} else {
		base, err = configs.Builtin(spec.Base)
	}
	if err != nil {
		return Spec{}, nil, fmt.Errorf("%s: base: %w", where("base"), err)
	}
	var methods []configs.Config // one per algorithm (and CVaR level)
	for _, alg := range spec.Algorithms {
		c := base
		c.Algorithm = alg
		if alg != "cvar" || len(spec.CVaRLevels) == 0 {
			methods = append(methods, c)
			continue
		}
		for _, a := range spec.CVaRLevels {
			c.CVaR.Level = a
			methods = append(methods, c)
		}
	}
	var out []configs.Config
	for _, m := range methods {
		for _, order := range spec.Orders {
			for _, seed := range spec.Seeds {
				c := m
				c.Name = fmt.Sprintf("%s-%s-%s", spec.Name, Variant(c), order)
				c.Order, c.Seed = order, seed
				if spec.Iterations > 0 {
					c.Meta.Iterations = spec.Iterations
				}
				// Build validates the config and what its task sets allow,
				// so that no run of a bad grid starts.
				if _, err := run.Build(c); err != nil {
					return Spec{}, nil, fmt.Errorf("%s: run %s seed %d: %w", path, c.Name, seed, err)
				}
				out = append(out, c)
			}
		}
	}
	return spec, out, nil
}

func allIn(values []string, allowed ...string) bool {
	for _, v := range values {
		if !slices.Contains(allowed, v) {
			return false
		}
	}
	return true
}

func unique[T comparable](values []T) bool {
	seen := map[T]bool{}
	for _, v := range values {
		if seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Jobs places each config in its run directory under out.
func Jobs(cfgs []configs.Config, out string) []Job {
	jobs := make([]Job, len(cfgs))
	for i, c := range cfgs {
		jobs[i] = Job{Config: c, Dir: filepath.Join(out, fmt.Sprintf("%s-%s-seed%d", Variant(c), c.Order, c.Seed))}
	}
	return jobs
}

// Variant names a run's method in run names and directories: the
// algorithm, with the level for CVaR (e.g. "cvar0.05").
func Variant(c configs.Config) string {
	if c.Algorithm == "cvar" {
		return "cvar" + strconv.FormatFloat(c.CVaR.Level, 'g', -1, 64)
	}
	return c.Algorithm
}

// Run executes the jobs with the given number of workers, skipping finished
// runs and resuming unfinished ones, and reports progress to w (redrawn in
// place on a terminal). It returns the errors of failed runs, joined; the
// other runs still complete.
func Run(jobs []Job, workers int, w io.Writer, terminal bool) error {
	board := newBoard(w, terminal, jobs)
	queue := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for k := 0; k < max(1, workers); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				errs[i] = runJob(jobs[i], board.progress(i))
				board.finish(i, errs[i])
			}
		}()
	}
	stop := board.start()
	for i := range jobs {
		queue <- i
	}
	close(queue)
	wg.Wait()
	stop()
	return errors.Join(errs...)
}

// runJob skips a finished run, resumes one with a checkpoint and starts the
// rest, provided that a run directory already there was made from the same
// config: an edited experiment file is refused, not silently ignored.
func runJob(j Job, p *run.Progress) error {
	cfgPath := filepath.Join(j.Dir, run.ConfigFile)
	if fileExists(cfgPath) {
		stored, err := configs.Load(cfgPath)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(stored, j.Config) {
			return fmt.Errorf("%s was made from a different config than the experiment now gives; "+
				"use a new -out or restore the experiment file", j.Dir)
		}
	}
	switch {
	case fileExists(filepath.Join(j.Dir, run.ResultFile)):
		return nil
	case fileExists(filepath.Join(j.Dir, run.CheckpointFile)):
		_, err := run.Resume(j.Dir, p)
		return err
	case fileExists(cfgPath):
		// Stopped before its first checkpoint: nothing but the (identical)
		// config to lose, so start over.
		if err := os.Remove(cfgPath); err != nil {
			return err
		}
	}
	_, err := run.Train(j.Config, j.Dir, p)
	return err
}

// board lays out one status line per active run and an overall line.
type board struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	jobs     []Job
	lines    []string
	progs    []*run.Progress
	state    []string // "", "running", "done" or "failed"
	drawn    int
	started  time.Time
}

func newBoard(w io.Writer, terminal bool, jobs []Job) *board {
	return &board{w: w, terminal: terminal, jobs: jobs, lines: make([]string, len(jobs)),
		progs: make([]*run.Progress, len(jobs)), state: make([]string, len(jobs))}
}

func (b *board) progress(i int) *run.Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state[i] = "running"
	p := run.NewProgressFunc(func(line string, evaluation bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines[i] = strings.TrimSpace(line)
		if evaluation && !b.terminal {
			fmt.Fprintln(b.w, b.lines[i])
		}
	})
	b.progs[i] = p
	return p
}

func (b *board) finish(i int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state[i] = "done"
	if err != nil {
		b.state[i] = "failed"
		b.lines[i] = fmt.Sprintf("%s: FAILED: %v", b.jobs[i].Dir, err)
	}
	if !b.terminal {
		fmt.Fprintf(b.w, "%s: %s\n%s\n", b.jobs[i].Dir, b.state[i], b.overallLocked())
	}
}

// start redraws the board every half second on a terminal until stopped.
func (b *board) start() (stop func()) {
	b.started = time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				b.draw()
				return
			case <-t.C:
				b.draw()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// overallLocked is the experiment's status line; b.mu must be held.
func (b *board) overallLocked() string {
	total, doneIters := 0, 0
	for i, j := range b.jobs {
		total += j.Config.Meta.Iterations
		switch b.state[i] {
		case "done", "failed":
			doneIters += j.Config.Meta.Iterations
		case "running":
			doneIters += b.progs[i].Iteration()
		}
	}
	elapsed := time.Since(b.started)
	eta := "?"
	if doneIters > 0 {
		eta = (time.Duration(float64(total-doneIters)/float64(doneIters)*elapsed.Seconds()) * time.Second).Round(time.Second).String()
	}
	return fmt.Sprintf("experiment: %d/%d iterations over %d runs, elapsed %s, ETA %s",
		doneIters, total, len(b.jobs), elapsed.Round(time.Second), eta)
}

func (b *board) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.terminal {
		return
	}
	var active []string
	for i := range b.jobs {
		if b.state[i] == "running" && b.lines[i] != "" {
			active = append(active, b.lines[i])
		}
	}
	overall := b.overallLocked()
	if b.drawn > 0 {
		fmt.Fprintf(b.w, "\033[%dA", b.drawn)
	}
	for _, l := range append(active, overall) {
		fmt.Fprintf(b.w, "\r%s\033[K\n", l)
	}
	fmt.Fprint(b.w, "\033[J")
	b.drawn = len(active) + 1
}
