package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
	// CVaRLevel is the level a of algorithm "cvar" (absent for the others).
	CVaRLevel  float64   `json:"cvar_level,omitempty"`
	Order      string    `json:"order"`
	Seed       uint64    `json:"seed"`
	Iterations int       `json:"iterations"`
	Output     string    `json:"output_rule"`
	Metric     string    `json:"metric"`
	MetaTest   Stats     `json:"meta_test"`
	MetaTrain  Stats     `json:"meta_train"`
	FinalP     []float64 `json:"final_p,omitempty"`
	Timing     Timing    `json:"timing"`
}

// Timing is the wall-clock cost of a run, the one part of result.json that
// differs between identical runs.
type Timing struct {
	MsPerIteration float64 `json:"ms_per_iteration"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
}

// Model is model.json: the solution chosen by the output rule.
type Model struct {
	Sizes      []int     `json:"sizes"`
	Activation string    `json:"activation"`
	W          []float64 `json:"w"`
	P          []float64 `json:"p,omitempty"`
}

// checkpoint is checkpoint.json: the training state after an evaluation.
// The optimizer is kept raw: its concrete type comes from the config.
type checkpoint struct {
	State        metalearn.State `json:"state"`
	Optimizer    json.RawMessage `json:"optimizer"`
	TrainSeconds float64         `json:"train_seconds"`
	EvalSeconds  float64         `json:"eval_seconds"`
}

// Train runs cfg into the new directory dir, reporting progress to p (nil
// for none). On a non-finite loss it stops with an error and leaves the
// files of the last evaluation, including its checkpoint.
func Train(cfg configs.Config, dir string, p *Progress) (*Result, error) {
	s, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	if err := createRunDir(dir); err != nil {
		return nil, err
	}
	yml, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, ConfigFile), yml); err != nil {
		return nil, err
	}
	w0, err := s.Model.Init(graph.Init(cfg.Model.Init), cfg.Model.InitStd, rand.New(rand.NewPCG(cfg.Seed, 0x696e6974)))
	if err != nil {
		return nil, err
	}
	ss, err := newSession(s, dir, w0)
	if err != nil {
		return nil, err
	}
	ss.metrics.WriteString(metricsHeader)
	ss.pcsv.WriteString("iteration")
	for i := 0; i < s.Train.Len(); i++ {
		ss.pcsv.WriteString("," + csvQuote(s.Train.Name(i)))
	}
	ss.pcsv.WriteString("\n")
	if err := ss.record(); err != nil {
		return nil, err
	}
	return ss.train(p)
}

// Resume continues the unfinished run in dir from its last checkpoint; the
// finished run is identical to one that never stopped (but for timing).
func Resume(dir string, p *Progress) (*Result, error) {
	cfg, err := configs.Load(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	s, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, fmt.Errorf("%s cannot be resumed: %w", dir, err)
	}
	var ck checkpoint
	ckPath := filepath.Join(dir, CheckpointFile)
	if err := json.Unmarshal(raw, &ck); err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	ss, err := newSession(s, dir, ck.State.W)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(ck.Optimizer, ss.opt); err != nil {
		return nil, fmt.Errorf("%s: optimizer state: %w", ckPath, err)
	}
	if a, ok := ss.opt.(*metalearn.Adam); ok && (len(a.M) != len(ck.State.W) || len(a.V) != len(ck.State.W)) {
		return nil, fmt.Errorf("%s: the optimizer state is not Adam's for %d parameters (was meta.optimizer changed?)", ckPath, len(ck.State.W))
	}
	if err := ss.tr.Restore(ck.State); err != nil {
		return nil, fmt.Errorf("%s: %w", ckPath, err)
	}
	ss.trainDur = time.Duration(ck.TrainSeconds * float64(time.Second))
	ss.evalDur = time.Duration(ck.EvalSeconds * float64(time.Second))
	// Keep the metric rows up to the checkpoint; later ones are redone.
	for _, f := range []struct {
		name string
		buf  *bytes.Buffer
	}{{MetricsFile, &ss.metrics}, {PFile, &ss.pcsv}} {
		raw, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return nil, fmt.Errorf("%s cannot be resumed: %w", dir, err)
		}
		lines := strings.SplitAfter(string(raw), "\n")
		for i, line := range lines {
			it, _, _ := strings.Cut(line, ",")
			if n, err := strconv.Atoi(it); i > 0 && (err != nil || n > ck.State.Iteration) {
				break
			}
			f.buf.WriteString(line)
		}
	}
	return ss.train(p)
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
	tr, err := metalearn.NewTrainer(settings, s.Objective, s.Train, opt, w0, cfg.Seed, cfg.Task.Support, cfg.Task.Query)
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
	trainStats, testStats, err := ss.s.evaluate(tr.State.W, tr.State.Iteration)
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
	ss.p.Evaluated(testStats.Mean, testStats.Worst)

	snap, err := tr.Snapshot()
	if err != nil {
		return err
	}
	opt, err := json.Marshal(ss.opt)
	if err != nil {
		return err
	}
	ck, err := json.Marshal(checkpoint{State: snap, Optimizer: opt, TrainSeconds: ss.trainDur.Seconds(), EvalSeconds: ss.evalDur.Seconds()})
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
			return nil, fmt.Errorf("%s: training stopped: %w (the files in %s are from the last evaluation)", cfg.Name, err, ss.dir)
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
	trainStats, testStats, err := ss.s.evaluate(w, cfg.Meta.Iterations)
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
		},
		Metric: ss.s.Metric.Name,
	}
	model := Model{Sizes: ss.s.Model.Sizes, Activation: string(ss.s.Model.Activation), W: w}
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

// Evaluate re-evaluates the solution saved in run directory dir with the
// run's own evaluation protocol and seed (or evalSeed, if not zero), writes
// evaluation.json there and returns it. With the run's seed it reproduces
// the statistics of result.json.
func Evaluate(dir string, evalSeed uint64) (*Result, error) {
	cfg, err := configs.Load(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	var model Model
	raw, err := os.ReadFile(filepath.Join(dir, ModelFile))
	if err != nil {
		return nil, fmt.Errorf("%s has no finished model: %w", dir, err)
	}
	if err := json.Unmarshal(raw, &model); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ModelFile), err)
	}
	s, err := Build(cfg)
	if err != nil {
		return nil, err
	}
	if len(model.W) != s.Objective.NumParams() {
		return nil, fmt.Errorf("%s: %d parameters, the config's model has %d", filepath.Join(dir, ModelFile), len(model.W), s.Objective.NumParams())
	}
	if evalSeed != 0 {
		s.Config.Seed = evalSeed
	}
	start := time.Now()
	trainStats, testStats, err := s.evaluate(model.W, cfg.Meta.Iterations)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Name: cfg.Name, Algorithm: cfg.Algorithm, CVaRLevel: cvarLevel(cfg), Order: cfg.Order, Seed: s.Config.Seed, Iterations: cfg.Meta.Iterations,
		Output: cfg.Meta.Output, MetaTest: testStats, MetaTrain: trainStats, FinalP: model.P,
		Timing: Timing{EvalSeconds: time.Since(start).Seconds()},
		Metric: s.Metric.Name,
	}
	return res, writeJSON(filepath.Join(dir, EvalFile), res)
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
