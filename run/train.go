package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/internal/atomicfile"
	"github.com/trmaml/trmaml/metalearn"
)

// Result is result.json: the final solution's statistics on the meta-test
// and meta-training task sets, the final task distribution p (TR-MAML), and
// the cost. Everything but Timing is a deterministic function of the config
// and seed. Metric names what the statistics measure, a metalearn.Metric's
// Name ("mse", "accuracy"); files from before the field are read as "mse".
type Result struct {
	Name      string `json:"name"`
	Algorithm string `json:"algorithm"`
	// CVaRLevel is the value of the setting the method sweeps
	// (metalearn.MethodInfo.Swept: CVaR's level a), absent for the others.
	CVaRLevel  float64   `json:"cvar_level,omitempty"`
	Order      string    `json:"order"`
	Seed       uint64    `json:"seed"`
	Iterations int       `json:"iterations"`
	Output     string    `json:"output_rule"`
	Metric     string    `json:"metric"`
	MetaTest   Stats     `json:"meta_test"`
	MetaTrain  Stats     `json:"meta_train"`
	FinalP     []float64 `json:"final_p,omitempty"`
	// Source, in evaluation.json only, names what was evaluated when it is
	// not model.json: a checkpoint of a run that did not finish.
	Source string `json:"source,omitempty"`
	// Overrides, in evaluation files only, are the config changes
	// ("field.path=value") the solution was evaluated under.
	Overrides []string `json:"overrides,omitempty"`
	Timing    Timing   `json:"timing"`
}

// Timing is the wall-clock cost of a run, the one part of result.json that
// differs between identical runs, and what it was measured on: the engine of
// the build (graph.Engine) and GOMAXPROCS of the run's last segment.
type Timing struct {
	MsPerIteration float64 `json:"ms_per_iteration"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	Engine         string  `json:"engine,omitempty"`
	Procs          int     `json:"gomaxprocs,omitempty"`
}

// Model is model.json: the solution chosen by the output rule, and the
// network it parameterises: the MLP's layer sizes and activation, or the
// CNN.
type Model struct {
	Sizes      []int      `json:"sizes,omitempty"`
	Activation string     `json:"activation,omitempty"`
	CNN        *graph.CNN `json:"cnn,omitempty"`
	W          []float64  `json:"w"`
	P          []float64  `json:"p,omitempty"`
}

// Train runs cfg into the new directory dir, reporting progress to p (nil
// for none). It holds dir's lock while it writes. On a non-finite loss or
// state it stops with an error and leaves the files of the last evaluation,
// including its checkpoint.
func Train(cfg configs.Config, dir string, p *Progress) (*Result, error) {
	s, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	lock, err := createRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	yml, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, ConfigFile), yml); err != nil {
		return nil, err
	}
	return start(s, dir, p)
}

// start trains s from iteration 0 in dir, which holds its config.yaml and
// nothing else that counts: the metric files are written afresh.
func start(s *Setup, dir string, p *Progress) (*Result, error) {
	cfg := s.Config
	w0, err := s.init(rand.New(rand.NewPCG(cfg.Seed, 0x696e6974)))
	if err != nil {
		return nil, err
	}
	ss, err := newSession(s, dir, w0)
	if err != nil {
		return nil, err
	}
	ss.metrics.WriteString(metricsHeader)
	ss.pcsv.WriteString(pHeader(s.Train))
	if err := ss.record(); err != nil {
		return nil, err
	}
	return ss.train(p)
}

// pHeader is p.csv's header: iteration, then one column per meta-training
// task.
func pHeader(train metalearn.TaskSet) string {
	var b strings.Builder
	b.WriteString("iteration")
	for i := 0; i < train.Len(); i++ {
		b.WriteString("," + csvQuote(train.Name(i)))
	}
	b.WriteString("\n")
	return b.String()
}

// Resume continues the unfinished run in dir from its last checkpoint; the
// finished run is identical to one that never stopped (but for timing). A
// run stopped before its first checkpoint starts again from iteration 0
// with the config in dir. It holds dir's lock, and first removes the
// temporary files of writes a crash interrupted.
func Resume(dir string, p *Progress) (*Result, error) {
	lock, err := openRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := loadSetup(dir)
	if err != nil {
		return nil, err
	}
	ckPath := filepath.Join(dir, CheckpointFile)
	if _, err := os.Stat(ckPath); errors.Is(err, os.ErrNotExist) {
		return start(s, dir, p)
	}
	ss, ck, err := restoreSession(s, dir)
	if err != nil {
		return nil, err
	}
	ss.trainDur = time.Duration(ck.TrainSeconds * float64(time.Second))
	ss.evalDur = time.Duration(ck.EvalSeconds * float64(time.Second))
	// Keep the metric rows up to the checkpoint; later ones are redone.
	if err := keepRows(filepath.Join(dir, MetricsFile), metricsHeader, strings.Count(metricsHeader, ",")+1, ck.State.Iteration, &ss.metrics); err != nil {
		return nil, err
	}
	if err := keepRows(filepath.Join(dir, PFile), pHeader(s.Train), 1+s.Train.Len(), ck.State.Iteration, &ss.pcsv); err != nil {
		return nil, err
	}
	return ss.train(p)
}

// loadSetup builds the run of the config.yaml in dir, with the fields of
// sets changed (see Evaluate); errors name the file.
func loadSetup(dir string, sets ...string) (*Setup, error) {
	cfgPath := filepath.Join(dir, ConfigFile)
	cfg, err := configs.Load(cfgPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s has no %s: not a run directory (or one killed before its config was written: start it again with train)", dir, ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	if len(sets) > 0 {
		if cfg, err = configs.Override(cfg, sets, EvalOverridable); err != nil {
			return nil, err
		}
	}
	s, err := Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfgPath, err)
	}
	return s, nil
}

// restoreSession continues s from the checkpoint in dir, refusing (with the
// file and the field) a checkpoint that is damaged or does not fit s.
func restoreSession(s *Setup, dir string) (*session, checkpoint, error) {
	ckPath := filepath.Join(dir, CheckpointFile)
	ck, err := readCheckpoint(ckPath)
	if err != nil {
		return nil, checkpoint{}, fmt.Errorf("%s cannot be resumed: %w", dir, err)
	}
	if n := s.Objective.NumParams(); len(ck.State.W) != n {
		return nil, checkpoint{}, fmt.Errorf("%s: state.W: %d parameters, the model of %s has %d", ckPath, len(ck.State.W), ConfigFile, n)
	}
	ss, err := newSession(s, dir, ck.State.W)
	if err != nil {
		return nil, checkpoint{}, fmt.Errorf("%s: %w", ckPath, err)
	}
	if err := restoreOptimizer(ss.opt, ck.Optimizer); err != nil {
		return nil, checkpoint{}, fmt.Errorf("%s: %w", ckPath, err)
	}
	if err := ss.tr.Restore(ck.State); err != nil {
		return nil, checkpoint{}, fmt.Errorf("%s: %w (does it belong to this %s?)", ckPath, err, ConfigFile)
	}
	return ss, ck, nil
}

// keepRows copies into buf the header and the rows of the CSV file at path
// up to the row of iteration last, which must be there: rows before a
// checkpoint are evaluations of earlier iterates that resume cannot redo,
// so a damaged one is refused, naming the line.
func keepRows(path, header string, fields, last int, buf *bytes.Buffer) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s cannot be resumed: %w", filepath.Dir(path), err)
	}
	refuse := func(line int, what string) error {
		return fmt.Errorf("%s:%d: %s; the rows up to the checkpoint's iteration %d are evaluations resume cannot redo: restore the file, or train the run again into a new directory",
			path, line, what, last)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if lines[0] != header {
		return refuse(1, "the header is not the run's")
	}
	buf.WriteString(header)
	prev := -1
	for i, line := range lines[1:] {
		if line == "" {
			break
		}
		rec := strings.Split(strings.TrimSuffix(line, "\n"), ",")
		it, err := strconv.Atoi(rec[0])
		switch {
		case err != nil || !strings.HasSuffix(line, "\n"):
			return refuse(i+2, fmt.Sprintf("%q is not a complete row", strings.TrimSpace(line)))
		case it <= prev || it > last:
			return refuse(i+2, fmt.Sprintf("iteration %d out of order", it))
		case len(rec) != fields:
			return refuse(i+2, fmt.Sprintf("%d fields, want %d", len(rec), fields))
		}
		for _, f := range rec[1:] {
			if v, err := strconv.ParseFloat(f, 64); (err != nil || math.IsNaN(v) || math.IsInf(v, 0)) && !(f == "" && it == 0) {
				return refuse(i+2, fmt.Sprintf("%q is not a finite number", f))
			}
		}
		buf.WriteString(line)
		if prev = it; it == last {
			return nil
		}
	}
	return refuse(len(lines), fmt.Sprintf("no row for iteration %d", last))
}

const metricsHeader = "iteration,elapsed_seconds,batch_mean,batch_worst,train_mean,train_worst,train_std,test_mean,test_worst,test_std\n"

// session is one training process on a run directory: the trainer, its
// optimizer, the metric files being accumulated, and the time spent.
type session struct {
	s                  *Setup
	dir                string
	opt                metalearn.Optimizer
	tr                 *metalearn.Trainer
	metrics, pcsv      bytes.Buffer
	trainDur, evalDur  time.Duration
	batchSum, batchMax float64
	batchN             int
	p                  *Progress
}

func newSession(s *Setup, dir string, w0 []float64) (*session, error) {
	cfg := s.Config
	opt, err := metalearn.NewOptimizer(cfg.Meta.Optimizer, cfg.Meta.LR, len(w0))
	if err != nil {
		return nil, err
	}
	method, err := NewMethod(cfg)
	if err != nil {
		return nil, err
	}
	settings := metalearn.Settings{
		Method: method, Iterations: cfg.Meta.Iterations, Batch: cfg.Meta.Batch,
		BallRadius: cfg.Meta.BallRadius, Output: metalearn.OutputRule(cfg.Meta.Output),
	}
	tr, err := metalearn.NewTrainer(settings, s.Objective, s.Train, opt, w0, cfg.Seed, s.Support, s.Query)
	if err != nil {
		return nil, err
	}
	return &session{s: s, dir: dir, opt: opt, tr: tr}, nil
}

// record evaluates the current iterate, appends to the metric files and
// writes them and a checkpoint.
func (ss *session) record() error {
	tr := ss.tr
	start := time.Now()
	trainStats, testStats, err := ss.s.evaluate(tr.State.W, tr.State.Iteration, false)
	if err != nil {
		return err
	}
	ss.evalDur += time.Since(start)
	bm, bw := "", ""
	if ss.batchN > 0 {
		bm, bw = fmtF(ss.batchSum/float64(ss.batchN)), fmtF(ss.batchMax)
	}
	fmt.Fprintf(&ss.metrics, "%d,%.3f,%s,%s,%s,%s,%s,%s,%s,%s\n", tr.State.Iteration, (ss.trainDur + ss.evalDur).Seconds(), bm, bw,
		fmtF(trainStats.Mean), fmtF(trainStats.Worst), fmtF(trainStats.Std),
		fmtF(testStats.Mean), fmtF(testStats.Worst), fmtF(testStats.Std))
	ss.pcsv.WriteString(strconv.Itoa(tr.State.Iteration))
	for _, v := range tr.State.P {
		ss.pcsv.WriteString("," + fmtF(v))
	}
	ss.pcsv.WriteString("\n")
	ss.batchSum, ss.batchMax, ss.batchN = 0, 0, 0
	ss.p.Evaluated(testStats.Mean, testStats.Worst, ss.s.Metric)

	snap, err := tr.Snapshot()
	if err != nil {
		return err
	}
	opt, err := json.Marshal(ss.opt)
	if err != nil {
		return err
	}
	ck, err := encodeCheckpoint(checkpoint{State: snap, Optimizer: opt, TrainSeconds: ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds()})
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(ss.dir, MetricsFile), ss.metrics.Bytes()); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(ss.dir, PFile), ss.pcsv.Bytes()); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(ss.dir, CheckpointFile), ck)
}

// train runs the remaining iterations, then evaluates the solution of the
// output rule and writes model.json and result.json.
func (ss *session) train(p *Progress) (*Result, error) {
	cfg, tr := ss.s.Config, ss.tr
	ss.p = p
	schedule, err := metalearn.NewSchedule(cfg.Meta.Schedule, cfg.Meta.LR, cfg.Meta.LRMin, cfg.Meta.Iterations)
	if err != nil {
		return nil, err
	}
	p.Start(fmt.Sprintf("%s seed %d", cfg.Name, cfg.Seed), tr.State.Iteration, cfg.Meta.Iterations)
	for tr.State.Iteration < cfg.Meta.Iterations {
		restoreLR, err := metalearn.ScheduleStep(ss.opt, schedule, tr.State.Iteration)
		if err != nil {
			p.Done()
			return nil, err
		}
		start := time.Now()
		st, err := tr.Step()
		ss.trainDur += time.Since(start)
		restoreLR()
		if err != nil {
			p.Done()
			return nil, fmt.Errorf("%s: training stopped: %w (the files in %s are from the last evaluation; trmaml eval -run %s evaluates its checkpoint)", cfg.Name, err, ss.dir, ss.dir)
		}
		ss.batchSum += st.MeanLoss
		ss.batchMax = max(ss.batchMax, st.MaxLoss)
		ss.batchN++
		p.Step(tr.State.Iteration, st.MeanLoss, st.MaxLoss)
		if tr.State.Iteration%cfg.Eval.Every == 0 || tr.State.Iteration == cfg.Meta.Iterations {
			if err := ss.record(); err != nil {
				p.Done()
				return nil, err
			}
		}
	}
	p.Done()

	w, pFinal := tr.Solution()
	start := time.Now()
	trainStats, testStats, err := ss.s.evaluate(w, cfg.Meta.Iterations, true)
	if err != nil {
		return nil, err
	}
	ss.evalDur += time.Since(start)
	res := &Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: cfg.Seed, Iterations: cfg.Meta.Iterations,
		Output: cfg.Meta.Output, MetaTest: testStats, MetaTrain: trainStats,
		Timing: Timing{
			MsPerIteration: ss.trainDur.Seconds() * 1000 / float64(cfg.Meta.Iterations),
			TrainSeconds:   ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds(),
			Engine: graph.Engine(), Procs: runtime.GOMAXPROCS(0),
		},
		Metric: ss.s.Metric.Name,
	}
	model := ss.s.record
	model.W = w
	if movesP(cfg.Algorithm) {
		res.FinalP, model.P = pFinal, pFinal
	}
	if err := writeJSON(filepath.Join(ss.dir, ModelFile), model); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(ss.dir, ResultFile), res); err != nil {
		return nil, err
	}
	return res, nil
}

// EvalOverridable says which config fields an evaluation may change (eval
// -set): the evaluation protocol and the fields of how instances are
// prepared that task families list (configs.EvalFields, e.g.
// task.omniglot.resize), never what was trained.
func EvalOverridable(path string) bool {
	return strings.HasPrefix(path, "eval.") || slices.Contains(configs.EvalFields(), path)
}

// EvalFileFor is the file Evaluate writes for the changes sets: EvalFile
// without changes, else evaluation-CHANGES.json, so that evaluations under
// other protocols sit beside the run's own.
func EvalFileFor(sets []string) string {
	if len(sets) == 0 {
		return EvalFile
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._=,-", r) {
			return r
		}
		return '_'
	}, strings.Join(sets, ","))
	return strings.TrimSuffix(EvalFile, ".json") + "-" + name + ".json"
}

// Evaluate re-evaluates the solution saved in run directory dir with the
// run's own evaluation protocol and seed (or evalSeed, if not zero), writes
// evaluation.json there and returns it. With the run's seed it reproduces
// the statistics of result.json. A run without model.json (unfinished, or
// stopped on a non-finite value) is evaluated at its last good checkpoint:
// the output rule's solution at that iteration, which Result.Iterations and
// Result.Source give. sets ("field.path=value", see EvalOverridable)
// evaluate the same solution under another protocol or image preparation;
// the result records them and goes to EvalFileFor(sets).
func Evaluate(dir string, evalSeed uint64, sets ...string) (*Result, error) {
	lock, err := openRunDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := loadSetup(dir, sets...)
	if err != nil {
		return nil, err
	}
	cfg := s.Config
	w, p, iterations, source, err := savedSolution(s, dir)
	if err != nil {
		return nil, err
	}
	if evalSeed != 0 {
		s.Config.Seed = evalSeed
	}
	start := time.Now()
	trainStats, testStats, err := s.evaluate(w, iterations, true)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: s.Config.Seed, Iterations: iterations,
		Output: cfg.Meta.Output, MetaTest: testStats, MetaTrain: trainStats, FinalP: p, Source: source,
		Timing: Timing{EvalSeconds: time.Since(start).Seconds()},
		Metric: s.Metric.Name, Overrides: sets,
	}
	return res, writeJSON(filepath.Join(dir, EvalFileFor(sets)), res)
}

// savedSolution returns the solution of the run in dir: model.json's, or,
// when the run has none, the output rule's at its checkpoint.
func savedSolution(s *Setup, dir string) (w, p []float64, iterations int, source string, err error) {
	path := filepath.Join(dir, ModelFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		ss, ck, err := restoreSession(s, dir)
		if err != nil {
			return nil, nil, 0, "", fmt.Errorf("%s has no finished model and no checkpoint to evaluate: %w", dir, err)
		}
		w, p = ss.tr.Solution()
		if !movesP(s.Config.Algorithm) {
			p = nil
		}
		return w, p, ck.State.Iteration, fmt.Sprintf("%s at iteration %d (no %s)", CheckpointFile, ck.State.Iteration, ModelFile), nil
	}
	if err != nil {
		return nil, nil, 0, "", err
	}
	var model Model
	if err := json.Unmarshal(raw, &model); err != nil {
		return nil, nil, 0, "", fmt.Errorf("%s: %w", path, err)
	}
	if len(model.W) != s.Objective.NumParams() {
		return nil, nil, 0, "", fmt.Errorf("%s: w: %d parameters, the model of %s has %d", path, len(model.W), ConfigFile, s.Objective.NumParams())
	}
	return model.W, model.P, s.Config.Meta.Iterations, "", nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}

// fmtF formats a float with the shortest representation that round-trips.
func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func csvQuote(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
