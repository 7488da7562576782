package run

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/rundir"
)

// TestBestValidation: an Omniglot run evaluates its validation alphabets
// at every evaluation (validation.csv), keeps the best model by
// eval.select beside the last (model_best_val.json), and with meta.output
// best_val evaluates that model: result.json names its iteration, and
// model.json is it. The last-iterate run of the same config trains the
// same and keeps the same best model.
func TestBestValidation(t *testing.T) {
	t.Parallel()
	opts := fixtureOptions(t)
	runs := map[string]*rundir.Result{}
	dirs := map[string]string{}
	for _, output := range []string{"last", "best_val"} {
		c := tinyOmniglot(t)
		c.Meta.Iterations, c.Meta.Output, c.Eval.Every, c.Eval.Select = 6, output, 1, "mean"
		dirs[output] = filepath.Join(t.TempDir(), output)
		res, err := Train(context.Background(), c, dirs[output], opts)
		if err != nil {
			t.Fatal(err)
		}
		runs[output] = res
	}
	raw, err := os.ReadFile(filepath.Join(dirs["best_val"], rundir.ValidationFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 8 || lines[0] != "iteration,mean,worst,cvar" {
		t.Fatalf("validation.csv has %d lines, want a header and 7 evaluations:\n%s", len(lines), raw)
	}
	best, bestIt := -1.0, -1
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		it, _ := strconv.Atoi(f[0])
		mean, _ := strconv.ParseFloat(f[1], 64)
		if mean > best {
			best, bestIt = mean, it
		}
	}
	if got := runs["best_val"].BestValIteration; got != bestIt || runs["last"].BestValIteration != 0 || chosenIteration(t, dirs["best_val"]) != bestIt {
		t.Errorf("best_val_iteration %d (last: %d), want %d, the first best mean of validation.csv", got, runs["last"].BestValIteration, bestIt)
	}
	bestModel, err := rundir.ReadModel(filepath.Join(dirs["last"], rundir.BestValModelFile))
	if err != nil {
		t.Fatal(err)
	}
	chosen, err := rundir.ReadModel(filepath.Join(dirs["best_val"], rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	last, err := rundir.ReadModel(filepath.Join(dirs["last"], rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if bestModel.Iteration != bestIt || !slices.Equal(bestModel.W, chosen.W) {
		t.Errorf("model_best_val.json of iteration %d, model.json of the best_val run the same: %v", bestModel.Iteration, slices.Equal(bestModel.W, chosen.W))
	}
	if bestIt != 6 && slices.Equal(last.W, chosen.W) {
		t.Error("the best_val run returned the last iterate")
	}
	if runs["best_val"].Output != "best_val" {
		t.Errorf("output_rule %q", runs["best_val"].Output)
	}
	// The chosen model is model.json, sealed and bound like any.
	if _, err := rundir.Verify(dirs["best_val"]); err != nil {
		t.Error(err)
	}
	// trmaml eval of the run evaluates the chosen model, as result.json.
	ev, err := Evaluate(context.Background(), dirs["best_val"], 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.MetaTest.PerTask, runs["best_val"].MetaTest.PerTask) || ev.BestValIteration != bestIt {
		t.Errorf("evaluation %v, result.json %v", ev.MetaTest.PerTask, runs["best_val"].MetaTest.PerTask)
	}
}

// TestBestValidationResume: a best_val run resumed from the checkpoint of
// its middle ends as the uninterrupted run, validation.csv included.
func TestBestValidationResume(t *testing.T) {
	t.Parallel()
	opts := fixtureOptions(t)
	c := tinyOmniglot(t)
	c.Meta.Schedule, c.Meta.Output, c.Eval.Every, c.Eval.Select = "constant", "best_val", 1, "worst"
	c.Meta.Iterations = 2
	partial := filepath.Join(t.TempDir(), "partial")
	if _, err := Train(context.Background(), c, partial, opts); err != nil {
		t.Fatal(err)
	}
	c = unfinish(t, c, partial, 5)
	if err := os.Remove(filepath.Join(partial, rundir.ModelFile)); err != nil {
		t.Fatal(err)
	}
	resumed, err := Resume(context.Background(), partial, opts)
	if err != nil {
		t.Fatal(err)
	}
	fullDir := filepath.Join(t.TempDir(), "full")
	full, err := Train(context.Background(), c, fullDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "resumed best_val run", resumed, full)
	if resumed.BestValIteration != full.BestValIteration {
		t.Errorf("best_val_iteration %d resumed, %d uninterrupted", resumed.BestValIteration, full.BestValIteration)
	}
	a, _ := os.ReadFile(filepath.Join(partial, rundir.ValidationFile))
	b, _ := os.ReadFile(filepath.Join(fullDir, rundir.ValidationFile))
	if string(a) != string(b) {
		t.Errorf("validation.csv resumed:\n%s\nuninterrupted:\n%s", a, b)
	}
}

// TestBestValidationNeedsValidationTasks: best_val on a family without
// meta-validation tasks is refused naming meta.output.
func TestBestValidationNeedsValidationTasks(t *testing.T) {
	t.Parallel()
	c := configs.Defaults()
	c.Meta.Output = "best_val"
	_, err := Build(c, Options{})
	if err == nil || !strings.Contains(err.Error(), "meta.output: best_val needs meta-validation tasks") {
		t.Errorf("Build: %v", err)
	}
}

// chosenIteration is the iteration model.json records.
func chosenIteration(t *testing.T, dir string) int {
	m, err := rundir.ReadModel(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	return m.Iteration
}
