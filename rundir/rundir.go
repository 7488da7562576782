package rundir

import (
	"slices"
	"strings"

	"github.com/trmaml/trmaml/internal/dirlock"
)

// File names inside a run directory.
const (
	// ConfigFile is the resolved config the run was made from.
	ConfigFile = "config.yaml"
	// MetricsFile holds one row of statistics per evaluation (Column).
	MetricsFile = "metrics.csv"
	// PFile holds the task distribution p at each evaluation (PHistory).
	PFile = "p.csv"
	// TasksFile holds every task's value at each evaluation (TaskHistory),
	// bound to the checkpoint as metrics.csv is; runs started before it
	// existed have none and go on without it.
	TasksFile = "tasks.csv"
	// ValidationFile holds the statistics on the meta-validation tasks at
	// each evaluation (iteration, mean, worst, CVaR), for families that
	// have them; sealed and bound to the checkpoint as MetricsFile.
	ValidationFile = "validation.csv"
	// BestValModelFile is the model of the evaluation whose
	// meta-validation statistic (eval.select) was best so far (Model, with
	// its Iteration); meta.output best_val evaluates it. Sealed, and bound
	// to the checkpoint by its hash.
	BestValModelFile = "model_best_val.json"
	// CheckpointFile is the training state after the last evaluation.
	CheckpointFile = "checkpoint.json"
	// ModelFile is the finished run's solution (Model).
	ModelFile = "model.json"
	// ResultFile is the finished run's statistics (Result); its presence
	// marks a run as finished.
	ResultFile = "result.json"
	// EvalFile is a re-evaluation by trmaml eval (a Result).
	EvalFile = "evaluation.json"
	// FailedFile holds the error the run last stopped with, when that was
	// neither success nor an interruption (a diverged run, a method that
	// broke its contract); it goes when the run is continued successfully
	// or interrupted. It is not part of the run's state.
	FailedFile = "failed.txt"
	// LockFile is held by the process writing the directory.
	LockFile = dirlock.Name
)

// StateFiles are the files the state of a run depends on, in the order they
// are written: a run is resumed, evaluated and reported from these alone.
// The lock, temporary files and EvalFile are not part of it.
func StateFiles() []string {
	return []string{ConfigFile, ValidationFile, BestValModelFile, MetricsFile, PFile, TasksFile, CheckpointFile, ModelFile, ResultFile}
}

// EvalFileFor is the file trmaml eval writes for the config changes sets
// ("field.path=value"): EvalFile without changes, else
// evaluation-CHANGES.json with the changes in CanonicalSets' order, so that
// evaluations under other protocols sit beside the run's own and the same
// changes given in another order name the same file. A name longer than
// maxEvalName is cut and ends in a hash of all the changes (the result in
// the file records them in full), so that it can be written.
func EvalFileFor(sets []string) string {
	if len(sets) == 0 {
		return EvalFile
	}
	all := strings.Join(CanonicalSets(sets), ",")
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._=,-", r) {
			return r
		}
		return '_'
	}, all)
	base, ext := strings.TrimSuffix(EvalFile, ".json")+"-", ".json"
	if len(base)+len(name)+len(ext) > maxEvalName {
		hash := "-" + HashBytes([]byte(all))[:16]
		name = name[:maxEvalName-len(base)-len(hash)-len(ext)] + hash
	}
	return base + name + ext
}

// CanonicalSets is a copy of the config changes sets sorted: one
// evaluation's changes in one order whatever the order of the -set flags
// (a field may be given once, so no two of them change the same field).
// Values are kept as given: 0.1 and .1 are two spellings.
func CanonicalSets(sets []string) []string {
	return slices.Sorted(slices.Values(sets))
}

// maxEvalName bounds EvalFileFor's names: with the temporary file's dot,
// ".tmp" and digits they stay within the 255 bytes of a file name.
const maxEvalName = 200
