package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/rundir"
	"github.com/trmaml/trmaml/slurm"
	"gopkg.in/yaml.v3"
)

// Spec is an experiment file.
type Spec struct {
	// Name identifies the experiment; runs are named NAME-VARIANT-ORDER
	// (see Parse).
	Name string `yaml:"name"`
	// Base is the config every run starts from: a path relative to the
	// experiment file, or the name of a built-in config.
	Base string `yaml:"base"`
	// Algorithms, Orders and Seeds span the grid.
	Algorithms []string `yaml:"algorithms"`
	Orders     []string `yaml:"orders"`
	Seeds      []uint64 `yaml:"seeds"`
	// Sweep spans further axes of the grid: each key is a config field
	// path, each value the list of values to run, as if the base config
	// stated them (e.g. sweep: {cvar.level: [1, 0.5, 0.1], inner.steps: [1,
	// 5]}). An axis under a method's section (cvar.level) applies to that
	// method's runs only.
	Sweep Sweep `yaml:"sweep"`
	// Iterations, if not zero, overrides the base config's meta.iterations.
	Iterations int `yaml:"iterations"`
	// Slurm holds sbatch long options, without the dashes, that
	// `trmaml experiment -slurm` passes to its jobs (partition: gpu,
	// account: lab); package slurm says which are allowed.
	Slurm slurm.Options `yaml:"slurm"`
}

// Job is one run of the grid.
type Job struct {
	Config configs.Config
	Dir    string
}

// Load reads an experiment file and expands it like Parse.
func Load(path string, opts run.Options) (Spec, []configs.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	return Parse(path, raw, opts)
}

// Expand reads an experiment file, checks it and expands it into its runs'
// configs like Parse, but builds none of them, so it reads no data: what
// listing a grid's cells needs (trmaml status, experiment -list) on a
// machine without the data. A grid it accepts may still fail Parse's build.
func Expand(path string) (Spec, []configs.Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, nil, err
	}
	spec, out, lines, err := expand(path, raw)
	if err != nil {
		return Spec{}, nil, err
	}
	if errs := spec.Sweep.checkRead(out, lines); len(errs) > 0 {
		return Spec{}, nil, configs.Locate(path, lines, errs)
	}
	return spec, out, nil
}

// Parse decodes an experiment file with the config loader's strict rules
// and messages (configs.DecodeStrict: no unknown or duplicate keys, no float
// where an integer belongs, no seed outside uint64, exactly one document),
// checks it, and expands it into configs, each built once (run.Build) so
// that no run of a bad grid starts (with opts: the data an Omniglot grid
// loads then, it shares through opts.Datasets). path names the file in
// errors and anchors a relative base.
func Parse(path string, raw []byte, opts run.Options) (Spec, []configs.Config, error) {
	spec, out, lines, err := expand(path, raw)
	if err != nil {
		return Spec{}, nil, err
	}
	for _, c := range out {
		if _, err := run.Build(c, opts); err != nil {
			return Spec{}, nil, fmt.Errorf("%s: run %s seed %d: %w", path, c.Name, c.Seed, err)
		}
	}
	if errs := spec.Sweep.checkRead(out, lines); len(errs) > 0 {
		return Spec{}, nil, configs.Locate(path, lines, errs)
	}
	return spec, out, nil
}

// expand decodes and checks an experiment file and expands it into its
// runs' configs, in cell order, with the file's line of each key.
func expand(path string, raw []byte) (Spec, []configs.Config, map[string]int, error) {
	var spec Spec
	lines, err := configs.DecodeStrict(path, raw, &spec)
	if err != nil {
		return Spec{}, nil, nil, err
	}
	var errs []error
	check := func(field string, value any, ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, configs.FieldError(field, value, fmt.Sprintf(format, args...)))
		}
	}
	check("name", spec.Name, spec.Name != "" && !strings.ContainsAny(spec.Name, `/\ `), "must be a non-empty name without slashes or spaces")
	check("base", spec.Base, spec.Base != "", "must name a config file (relative to the experiment file) or a built-in config %v", configs.BuiltinNames())
	check("algorithms", spec.Algorithms, len(spec.Algorithms) > 0 && allIn(spec.Algorithms, metalearn.MethodNames()...), "must list some of the registered methods %v", metalearn.MethodNames())
	check("orders", spec.Orders, len(spec.Orders) > 0 && allIn(spec.Orders, "second", "first"), "must list second and/or first")
	check("seeds", spec.Seeds, len(spec.Seeds) > 0, "must list at least one seed")
	check("algorithms", spec.Algorithms, unique(spec.Algorithms), "must not repeat an entry")
	check("orders", spec.Orders, unique(spec.Orders), "must not repeat an entry")
	check("seeds", spec.Seeds, unique(spec.Seeds), "must not repeat a seed (runs would share a directory)")
	check("iterations", spec.Iterations, spec.Iterations >= 0 && spec.Iterations <= configs.MaxIterations,
		"must be in [0, %d] (0 keeps the base config's)", configs.MaxIterations)
	slurmLines(raw, lines)
	for _, k := range slices.Sorted(maps.Keys(spec.Slurm)) {
		if err := slurm.CheckOption(k, spec.Slurm[k]); err != nil {
			errs = append(errs, configs.FieldError("slurm."+k, spec.Slurm[k], err.Error()))
		}
	}
	errs = append(errs, spec.Sweep.check(spec, lines)...)
	if len(errs) > 0 {
		return Spec{}, nil, nil, configs.Locate(path, lines, errs)
	}
	if _, err := loadBase(path, spec.Base, nil); err != nil {
		return Spec{}, nil, nil, configs.Locate(path, lines, []error{configs.FieldError("base", spec.Base, err.Error())})
	}
	var out []configs.Config
	for _, alg := range spec.Algorithms {
		axes := spec.Sweep.axesOf(alg)
		for _, cell := range cells(axes) {
			c, err := loadBase(path, spec.Base, cell)
			if err != nil {
				return Spec{}, nil, nil, configs.Locate(path, lines, []error{configs.FieldError("base", spec.Base, err.Error())})
			}
			c.Algorithm = alg
			variant := Variant(c) + cellLabel(axes, cell, alg)
			for _, order := range spec.Orders {
				for _, seed := range spec.Seeds {
					c := c.Clone()
					c.Name = fmt.Sprintf("%s-%s-%s", spec.Name, variant, order)
					c.Order, c.Seed = order, seed
					if spec.Iterations > 0 {
						c.Meta.Iterations = spec.Iterations
					}
					out = append(out, c)
				}
			}
		}
	}
	return spec, out, lines, nil
}

// slurmLines adds the line of each key of the slurm: section to lines, as
// slurm.KEY, so that a refused sbatch option is reported at its own line:
// the strict decoder hands the section to slurm.Options whole and records
// only the section's.
func slurmLines(raw []byte, lines map[string]int) {
	var doc yaml.Node
	if yaml.Unmarshal(raw, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if m := root.Content[i+1]; root.Content[i].Value == "slurm" && m.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(m.Content); j += 2 {
				lines["slurm."+m.Content[j].Value] = m.Content[j].Line
			}
		}
	}
}

// loadBase loads an experiment's base: a file relative to the experiment
// file (a name with a slash or a .yaml suffix is always a file), or the name
// of a built-in config.
func loadBase(specPath, base string, sets []configs.Setting) (configs.Config, error) {
	if filepath.IsAbs(base) {
		return configs.Config{}, fmt.Errorf("must be relative to the experiment file, not absolute")
	}
	p := filepath.Join(filepath.Dir(specPath), base)
	st, err := os.Stat(p)
	switch {
	case err == nil && st.IsDir():
		return configs.Config{}, fmt.Errorf("%s is a directory, want a config file", p)
	case err == nil:
		return configs.LoadWith(p, specPath, sets)
	case strings.ContainsAny(base, `/\`) || strings.HasSuffix(base, ".yaml"):
		return configs.Config{}, fmt.Errorf("%s: no such file", p)
	}
	c, err := configs.BuiltinWith(base, specPath, sets)
	if err != nil {
		return configs.Config{}, fmt.Errorf("no file %s and %v", p, err)
	}
	return c, nil
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

// Jobs places each config in its run directory under out,
// VARIANT-ORDER-seedN (the run's name without the experiment's, see
// Parse), keeping the order of the configs: job i is the grid's cell i.
func Jobs(cfgs []configs.Config, out string) []Job {
	jobs := make([]Job, len(cfgs))
	for i, c := range cfgs {
		jobs[i] = Job{Config: c, Dir: filepath.Join(out, fmt.Sprintf("%s-seed%d", cellName(c), c.Seed))}
	}
	return jobs
}

// cellName is VARIANT-ORDER, the part of a grid run's name NAME-VARIANT-ORDER
// after the experiment's name: from the last "-ALGORITHM" on, since the
// variant starts with the algorithm.
func cellName(c configs.Config) string {
	head := strings.TrimSuffix(c.Name, "-"+c.Order)
	if i := strings.LastIndex(head, "-"+c.Algorithm); i >= 0 {
		return c.Name[i+1:]
	}
	return Variant(c) + "-" + c.Order
}

// Variant names a run's method in run names and directories: the
// algorithm, with the value of the setting its method sweeps (for CVaR
// the level, e.g. "cvar0.05"; metalearn.MethodInfo.Swept).
func Variant(c configs.Config) string {
	if info, err := c.MethodInfo(); err == nil && info.Swept != "" {
		return c.Algorithm + strconv.FormatFloat(c.Swept(), 'g', -1, 64)
	}
	return c.Algorithm
}

// ErrForeign is returned (wrapped) when the output directory of an
// experiment is a run directory or holds runs of something else.
var ErrForeign = errors.New("not this experiment's directory")

// Run executes the jobs, whose directories lie in out, with the given
// number of workers, skipping finished runs and resuming unfinished ones,
// and reports progress to w (redrawn in place on a terminal). It holds out's
// lock throughout, and refuses (ErrForeign) an out that is a run directory
// or holds directories other than the jobs' (another experiment's runs,
// which a report of out would mix in). It returns the errors of failed runs,
// joined; the other runs still complete. The runs share opts.Datasets (a
// new one if nil); each reports its own progress. When ctx is done, the
// runs in progress stop at a checkpoint, no other starts, and the
// error wraps run.ErrInterrupted.
func Run(ctx context.Context, out string, jobs []Job, workers int, w io.Writer, terminal bool, opts run.Options) error {
	lock, err := openOut(out, jobs)
	if err != nil {
		return err
	}
	defer lock.Release()
	if opts.Datasets == nil {
		opts.Datasets = new(configs.DataCache)
	}
	board := newBoard(w, terminal, jobs)
	queue := make(chan int)
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for k := 0; k < max(1, workers); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				if ctx.Err() != nil {
					continue // not started: the rerun starts it
				}
				o := opts
				o.Progress = board.progress(i)
				errs[i] = runJob(ctx, jobs[i], o)
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
	if ctx.Err() != nil && !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, run.ErrInterrupted) }) {
		errs = append(errs, fmt.Errorf("experiment %w before its remaining runs started", run.ErrInterrupted))
	}
	return errors.Join(errs...)
}

// openOut makes and locks the experiment directory out, refusing a run
// directory and directories that are not the jobs'.
func openOut(out string, jobs []Job) (*dirlock.Lock, error) {
	if err := checkOut(out, jobs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	lock, err := dirlock.Acquire(out)
	if err != nil {
		return nil, err
	}
	// Again under the lock: another process may have written meanwhile.
	if err := checkOut(out, jobs); err != nil {
		lock.Release()
		return nil, err
	}
	// The temporary files of a killed earlier write (of its report).
	if _, err := atomicfile.CleanTemps(out); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// CheckOut refuses (ErrForeign) an experiment directory out that is a run
// directory or holds directories other than the jobs' and SchedulerDir, and
// a run directory there made from another config than its job's: what a
// run of the jobs into out would refuse, checked before anything is
// written. A missing out is fine.
func CheckOut(out string, jobs []Job) error {
	if err := checkOut(out, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		if err := sameConfig(j); err != nil {
			return err
		}
	}
	return nil
}

// checkOut is CheckOut without the configs.
func checkOut(out string, jobs []Job) error {
	for _, f := range []string{rundir.ConfigFile, rundir.CheckpointFile, rundir.ResultFile} {
		if fileExists(filepath.Join(out, f)) {
			return fmt.Errorf("%s: %w: it is a run directory (it holds %s): choose another -out", out, ErrForeign, f)
		}
	}
	own := map[string]bool{SchedulerDir: true}
	for _, j := range jobs {
		if filepath.Clean(filepath.Dir(j.Dir)) != filepath.Clean(out) {
			return fmt.Errorf("job directory %s is not in %s", j.Dir, out)
		}
		own[filepath.Base(j.Dir)] = true
	}
	entries, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var foreign []string
	for _, e := range entries {
		if e.IsDir() && !own[e.Name()] {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("%s: %w: it holds directories that are not runs of this experiment: %s (its table and figures would mix them in): choose another -out, or move them away",
			out, ErrForeign, strings.Join(foreign, ", "))
	}
	return nil
}

// runJob skips a finished run, resumes an unfinished one (from its
// checkpoint, or from iteration 0 if it stopped before the first) and
// starts the rest, provided that a run directory already there was made
// from the same config: an edited experiment file is refused, not silently
// ignored. Nothing a later rerun needs is ever removed. A failure is kept
// in the run directory's FailedFile.
func runJob(ctx context.Context, j Job, opts run.Options) error {
	if !fileExists(filepath.Join(j.Dir, rundir.ConfigFile)) {
		_, err := run.Train(ctx, j.Config, j.Dir, opts)
		recordFailure(j, err)
		return err
	}
	if err := sameConfig(j); err != nil {
		return err
	}
	if finished(j.Dir) {
		clearFailure(j)
		return nil
	}
	_, err := run.Resume(ctx, j.Dir, opts)
	recordFailure(j, err)
	return err
}

// sameConfig refuses a run directory of j made from another config than
// j's; a directory without config is fine. The settings of the methods
// and task families a run does not use are not compared: its config.yaml
// carries them, but the run never reads them, so a rewritten experiment
// file that leaves them elsewhere (an ablation base file replaced by a
// sweep) still continues the runs it made.
func sameConfig(j Job) error {
	cfgPath := filepath.Join(j.Dir, rundir.ConfigFile)
	if !fileExists(cfgPath) {
		return nil
	}
	stored, err := configs.Load(cfgPath)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(readSettings(stored), readSettings(j.Config)) {
		return fmt.Errorf("%s was made from a different config than the experiment now gives; "+
			"use a new -out or restore the experiment file", j.Dir)
	}
	return nil
}

// readSettings is c without the sections of the methods other than its
// algorithm and of the task families other than its own.
func readSettings(c configs.Config) configs.Config {
	c = c.Clone()
	maps.DeleteFunc(c.Methods, func(name string, _ metalearn.Method) bool { return name != c.Algorithm })
	maps.DeleteFunc(c.Task.Sections, func(name string, _ any) bool { return name != c.Task.Family })
	return c
}

// board lays out one status line per active run and an overall line.
type board struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	jobs     []Job
	lines    []string
	progs    []*run.Progress
	state    []string // "", "running", "done", "interrupted" or "failed"
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
	switch {
	case errors.Is(err, run.ErrInterrupted):
		b.state[i] = "interrupted"
		b.lines[i] = fmt.Sprintf("%s: %v", b.jobs[i].Dir, err)
	case err != nil:
		b.state[i] = "failed"
		b.lines[i] = fmt.Sprintf("%s: FAILED: %v", b.jobs[i].Dir, err)
	default:
		b.state[i] = "done"
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

// overallLocked is the experiment's status line; b.mu must be held. Its ETA
// comes from the iterations this process ran, so runs finished or
// checkpointed by an earlier call do not make a resumed grid look fast.
func (b *board) overallLocked() string {
	total, doneIters, here := 0, 0, 0
	for i, j := range b.jobs {
		total += j.Config.Meta.Iterations
		reached := 0
		switch b.state[i] {
		case "done", "failed":
			reached = j.Config.Meta.Iterations
		case "running", "interrupted":
			reached = b.progs[i].Iteration()
		}
		doneIters += reached
		if from, started := b.progs[i].Resumed(); started {
			here += reached - from
		}
	}
	elapsed := time.Since(b.started)
	eta := "?"
	if here > 0 {
		eta = (time.Duration(float64(total-doneIters)/float64(here)*elapsed.Seconds()) * time.Second).Round(time.Second).String()
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

// finished reports whether the run in dir is finished: its result.json
// sealed (one written by a run killed before sealing it is finished by
// resume).
func finished(dir string) bool {
	if !fileExists(filepath.Join(dir, rundir.ResultFile)) {
		return false
	}
	s, err := rundir.Verify(dir)
	return err == nil && s.Finished
}
