package run

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
)

// EvalOverridable says which config fields an evaluation may change (eval
// -set): the evaluation protocol and the fields of how instances are
// prepared that task families list (configs.EvalFields, e.g.
// task.omniglot.resize), never what was trained.
func EvalOverridable(path string) bool {
	return strings.HasPrefix(path, "eval.") || slices.Contains(configs.EvalFields(), path)
}

// Evaluate re-evaluates the solution saved in run directory dir with the
// run's own evaluation protocol and seed (or evalSeed, if not zero), writes
// evaluation.json there and returns it. With the run's seed it reproduces
// the statistics of result.json. A run without model.json (unfinished, or
// stopped on a non-finite value) is evaluated at its last good checkpoint:
// the output rule's solution at that iteration, which Result.Iterations and
// Result.Source give. sets ("field.path=value", see EvalOverridable)
// evaluate the same solution under another protocol or image preparation;
// the result records them (rundir.CanonicalSets: sorted, as the file's
// name gives them) and goes to rundir.EvalFileFor(sets). When ctx
// is done the evaluation stops and writes nothing.
func Evaluate(ctx context.Context, dir string, evalSeed uint64, opts Options, sets ...string) (*rundir.Result, error) {
	lock, err := rundir.LockRun(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	sealed, err := rundir.Verify(dir)
	if err != nil {
		return nil, err
	}
	if err := rundir.CleanTemps(dir); err != nil {
		return nil, err
	}
	opts.warn(sealed.Note(dir))
	s, err := loadSetup(dir, opts, sets...)
	if err != nil {
		return nil, err
	}
	w, p, iterations, bestIt, source, err := savedSolution(s, dir, sealed.Finished)
	if err != nil {
		return nil, err
	}
	if evalSeed != 0 {
		s.Config.Seed = evalSeed
	}
	start := time.Now()
	cpu := newCPUMeter(nil, true)
	defer cpu.stop()
	trainStats, testStats, err := s.evaluate(ctx, w, iterations, true)
	if err != nil {
		return nil, err
	}
	cpu.eval()
	res := s.result(iterations, trainStats, testStats, p, rundir.CanonicalSets(sets))
	res.Source, res.BestValIteration = source, bestIt
	res.Timing = rundir.Timing{EvalSeconds: time.Since(start).Seconds(), Engine: graph.Engine(), Procs: runtime.GOMAXPROCS(0),
		EvalInstances: finalInstances(s.Config), CPU: cpu.times()}
	return res, rundir.WriteJSON(filepath.Join(dir, rundir.EvalFileFor(sets)), res)
}

// finalInstances is the number of instances of a final evaluation: both
// splits, as Setup.evaluate draws them.
func finalInstances(cfg configs.Config) int {
	if n := cfg.Eval.FinalInstances; n > 0 {
		return 2 * n
	}
	return cfg.Eval.TrainInstances + cfg.Eval.Instances
}

// savedSolution returns the solution of the run in dir: model.json's, or,
// when the run has none, the output rule's at its checkpoint (best_val: the
// best model so far); bestIt is the iteration of a best_val model.
func savedSolution(s *Setup, dir string, finished bool) (w, p []float64, iterations, bestIt int, source string, err error) {
	path := filepath.Join(dir, rundir.ModelFile)
	model, err := rundir.ReadModel(path)
	if !finished {
		// A model.json the manifest does not seal is from a kill while
		// finishing: the checkpoint is the run's state.
		err = os.ErrNotExist
	}
	if errors.Is(err, os.ErrNotExist) {
		ss, ck, err := restoreSession(s, dir)
		if err != nil {
			return nil, nil, 0, 0, "", fmt.Errorf("%s has no finished model and no checkpoint to evaluate: %w", dir, err)
		}
		w, p = ss.tr.Solution()
		source = fmt.Sprintf("%s at iteration %d (no %s)", rundir.CheckpointFile, ck.State.Iteration, rundir.ModelFile)
		if s.Config.Meta.Output == "best_val" && ss.val != nil && ss.val.bestW != nil {
			w, bestIt = ss.val.bestW, ss.val.bestIt
			source = fmt.Sprintf("%s of iteration %d, the best until the checkpoint at %d (no %s)", rundir.BestValModelFile, bestIt, ck.State.Iteration, rundir.ModelFile)
		}
		return w, p, ck.State.Iteration, bestIt, source, nil
	}
	if err != nil {
		return nil, nil, 0, 0, "", err
	}
	if len(model.W) != s.Objective.NumParams() {
		return nil, nil, 0, 0, "", fmt.Errorf("%s: w: %d parameters, the model of %s has %d", path, len(model.W), rundir.ConfigFile, s.Objective.NumParams())
	}
	return model.W, model.P, s.Config.Meta.Iterations, model.Iteration, "", nil
}

// evalRNG is the generator of the evaluation of one task set at a given
// iteration: derived from the seed, the set and the iteration alone, so
// evaluations never disturb the training stream, a re-evaluation draws the
// same instances, and no two (seed, set, iteration) share a stream.
func evalRNG(seed uint64, iteration int, set string) *rand.Rand {
	stream := uint64(0x74657374) // "test"
	switch set {
	case "train":
		stream = 0x74726e // "trn"
	case "validation":
		stream = 0x76616c // "val"
	}
	return rand.New(rand.NewPCG(seed, stream<<32|uint64(iteration)))
}

func newStats(s metalearn.TaskStats, set metalearn.TaskSet, cvar []float64, m metalearn.Metric) rundir.Stats {
	names := make([]string, set.Len())
	total := 0
	for i := range names {
		names[i] = set.Name(i)
		total += s.Count[i]
	}
	return rundir.Stats{
		Mean: s.Mean, WeightedMean: s.WeightedMean, Worst: s.Worst, WorstTask: names[s.WorstTask],
		Std: s.Std, Instances: total, PerTask: s.PerTask, Tasks: names, Masses: masses(set),
		CVaR: tailStats(s.PerTask, cvar, m),
	}
}

// tailStats is CVaR_alpha of the per-task values at each level.
func tailStats(perTask, levels []float64, m metalearn.Metric) []rundir.TailStat {
	var out []rundir.TailStat
	for _, a := range levels {
		out = append(out, rundir.TailStat{Alpha: a, Value: metalearn.TailMean(perTask, a, m)})
	}
	return out
}

// errEvaluationStopped is returned (wrapped) by an evaluation whose context
// was done: the caller checkpoints and returns ErrInterrupted.
var errEvaluationStopped = errors.New("evaluation stopped")

// evaluate measures w on both task sets with the evaluation generators of
// the given iteration: with eval.instances and eval.train_instances during
// training, with eval.final_instances (if set) for a final solution. When
// ctx is done it stops before its next batch of instances and returns
// errEvaluationStopped (the final evaluation of a paper-scale 20-way run
// takes tens of minutes, longer than Slurm's warning before a time limit).
func (s *Setup) evaluate(ctx context.Context, w []float64, iteration int, final bool) (train, test rundir.Stats, err error) {
	cfg := s.Config
	trainN, testN := cfg.Eval.TrainInstances, cfg.Eval.Instances
	if final && cfg.Eval.FinalInstances > 0 {
		trainN, testN = cfg.Eval.FinalInstances, cfg.Eval.FinalInstances
	}
	score := s.scorer(ctx)
	tr, err := s.Evaluator.EvaluateScore(w, s.EvalTrain, trainN, evalRNG(cfg.Seed, iteration, "train"), s.Metric, score)
	if err != nil {
		return rundir.Stats{}, rundir.Stats{}, fmt.Errorf("evaluating on the meta-training tasks: %w", err)
	}
	te, err := s.Evaluator.EvaluateScore(w, s.EvalTest, testN, evalRNG(cfg.Seed, iteration, "test"), s.Metric, score)
	if err != nil {
		return rundir.Stats{}, rundir.Stats{}, fmt.Errorf("evaluating on the meta-test tasks: %w", err)
	}
	return newStats(tr, s.EvalTrain, cfg.Eval.CVaRAlpha, s.Metric), newStats(te, s.EvalTest, cfg.Eval.CVaRAlpha, s.Metric), nil
}

// scorer is s.Score, stopping with errEvaluationStopped once ctx is done.
func (s *Setup) scorer(ctx context.Context) metalearn.Scorer {
	done := ctx.Done()
	if done == nil {
		return s.Score
	}
	return func(w []float64, b *metalearn.Batch, out []float64) error {
		select {
		case <-done:
			return errEvaluationStopped
		default:
			return s.Score(w, b, out)
		}
	}
}

// masses returns the TaskSet.Mass of every task of set.
func masses(set metalearn.TaskSet) []float64 {
	m := make([]float64, set.Len())
	for i := range m {
		m[i] = set.Mass(i)
	}
	return m
}
