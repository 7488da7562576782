package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph"

	omniglottask "github.com/trmaml/trmaml/tasks/omniglot"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/rundir"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

// testDatasets keeps the Omniglot data the tests load, as the runs of an
// experiment share it.
var testDatasets = new(configs.DataCache)

// An omniglotSource is Omniglot data the tests train on, with what its
// splits hold: the synthetic fixture on every clone, the real archives
// where the machine has them (omniglottest.Root skips otherwise).
type omniglotSource struct {
	name                  string
	options               func(t *testing.T) Options // the runs' data root and content
	train, test           int                        // meta-training and meta-test alphabets
	firstTrain, firstTest string
}

var omniglotSources = []omniglotSource{
	{"fixture", fixtureOptions, 3, 2, "Anglo-Saxon_Futhorc", "Angelic"},
	{"omniglot", omniglotOptions, 25, 20, "Anglo-Saxon_Futhorc", "Angelic"},
}

// fixtureOptions points the runs at a fresh synthetic release, accepted by
// its own content description.
func fixtureOptions(t *testing.T) Options {
	fx := omniglottest.WriteFixture(t, 1)
	rel, err := omniglot.Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	return Options{DataRoot: fx.Root, DataRelease: &rel, Datasets: testDatasets}
}

// omniglotOptions points the runs at the real archives.
func omniglotOptions(t *testing.T) Options {
	return Options{DataRoot: omniglottest.Root(t), Datasets: testDatasets}
}

// forEachSource runs test on every data source as a subtest, in parallel
// with other tests.
func forEachSource(t *testing.T, test func(t *testing.T, src omniglotSource, opts Options)) {
	t.Parallel()
	for _, src := range omniglotSources {
		t.Run(src.name, func(t *testing.T) { test(t, src, src.options(t)) })
	}
}

// tinyOmniglot is a seconds-long 5-way 1-shot TR-MAML run on the real
// alphabets with a 4-filter CNN, evaluated on 3 query images per class
// during training (other task sets than training's 5) and on 30 instances
// per split at the end.
func tinyOmniglot(t *testing.T) configs.Config {
	t.Helper()
	c, err := configs.Parse("tiny.yaml", []byte(`
name: tiny_omniglot
algorithm: trmaml
task:
  family: omniglot
  support: 1
  query: 5
  omniglot: {ways: 5, rotate: true, image_size: 28}
model:
  kind: conv4
  conv4: {filters: 4, blocks: 4}
  dtype: float32
inner: {steps: 1, alpha: 0.1}
meta: {iterations: 4, batch: 2, schedule: cosine, lr_min: 1.0e-6}
trmaml: {p_lr: 1.0e-3}
eval: {every: 2, instances: 25, train_instances: 25, query: 3, batch: 5, final_instances: 30}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOmniglotTrain trains the CNN on Omniglot end to end and checks what
// the run directory records: accuracy, every alphabet with its name and
// mass, the weighted mean by those masses, the final evaluation's instance
// count, and a re-evaluation that reproduces result.json.
func TestOmniglotTrain(t *testing.T) { forEachSource(t, testOmniglotTrain) }

func testOmniglotTrain(t *testing.T, src omniglotSource, opts Options) {
	dir := filepath.Join(t.TempDir(), "run")
	res, err := Train(context.Background(), tinyOmniglot(t), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "accuracy" {
		t.Errorf("metric %q, want accuracy", res.Metric)
	}
	for _, c := range []struct {
		what  string
		s     rundir.Stats
		tasks int
	}{{"meta_train", res.MetaTrain, src.train}, {"meta_test", res.MetaTest, src.test}} {
		s := c.s
		if len(s.Tasks) != c.tasks || len(s.PerTask) != c.tasks || len(s.Masses) != c.tasks {
			t.Fatalf("%s: %d tasks, %d values, %d masses; want %d", c.what, len(s.Tasks), len(s.PerTask), len(s.Masses), c.tasks)
		}
		if s.Instances != 30 {
			t.Errorf("%s: %d instances in the final evaluation, want eval.final_instances = 30", c.what, s.Instances)
		}
		sum, msum, worst := 0.0, 0.0, 1.0
		for i, a := range s.PerTask {
			if a < 0 || a > 1 || s.Tasks[i] == "" || !(s.Masses[i] > 0 && s.Masses[i] <= 1) {
				t.Errorf("%s: task %d %q accuracy %v mass %v", c.what, i, s.Tasks[i], a, s.Masses[i])
			}
			sum += s.Masses[i] * a
			msum += s.Masses[i]
			worst = min(worst, a)
		}
		if math.Abs(s.WeightedMean-sum/msum) > 1e-12 || s.Worst != worst {
			t.Errorf("%s: weighted mean %v worst %v, want %v and the smallest accuracy %v", c.what, s.WeightedMean, s.Worst, sum/msum, worst)
		}
	}
	if res.MetaTrain.Tasks[0] != src.firstTrain || res.MetaTest.Tasks[0] != src.firstTest {
		t.Errorf("first alphabets %q, %q", res.MetaTrain.Tasks[0], res.MetaTest.Tasks[0])
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	var model rundir.Model
	if err := json.Unmarshal(raw, &model); err != nil {
		t.Fatal(err)
	}
	var cnn graph.CNN
	if err := json.Unmarshal(model.Net, &cnn); err != nil || model.Kind != "conv4" || cnn.Filters != 4 || cnn.Ways != 5 {
		t.Errorf("model.json describes %+v, want the 4-filter 5-way CNN", model)
	}
	metrics, err := os.ReadFile(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(metrics), "\n"); rows != 4 {
		t.Errorf("metrics.csv has %d lines, want the header and iterations 0, 2, 4", rows)
	}
	again, err := Evaluate(context.Background(), dir, 0, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.MetaTest, res.MetaTest) || !reflect.DeepEqual(again.MetaTrain, res.MetaTrain) {
		t.Error("re-evaluation with the run's seed differs from result.json")
	}

	// The same solution under the paper code's image preparation: another
	// file, the changes recorded, other accuracies, result.json untouched.
	// The flags in another order name the same file and record the changes
	// in its order.
	sets := []string{"task.omniglot.resize=nearest", "task.omniglot.rotate_eval=false"}
	other, err := Evaluate(context.Background(), dir, 0, opts, sets[1], sets[0])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(other.Overrides, sets) || reflect.DeepEqual(other.MetaTest.PerTask, res.MetaTest.PerTask) {
		t.Errorf("evaluation under %v: overrides %v, per-task accuracies %v (unchanged: %v)", sets, other.Overrides, other.MetaTest.PerTask, res.MetaTest.PerTask)
	}
	if _, err := os.Stat(filepath.Join(dir, "evaluation-task.omniglot.resize=nearest,task.omniglot.rotate_eval=false.json")); err != nil {
		t.Error(err)
	}
	if _, err := Evaluate(context.Background(), dir, 0, opts, "model.cnn.filters=8"); err == nil || !strings.Contains(err.Error(), "model.cnn.filters may not be changed") {
		t.Errorf("changing the model at evaluation: error %v", err)
	}
}

// TestOmniglotMissingData: a data root without Omniglot is a config error
// of data.root that says how to fetch the data, before anything is written.
func TestOmniglotMissingData(t *testing.T) {
	t.Parallel()
	opts := Options{DataRoot: t.TempDir()}
	dir := filepath.Join(t.TempDir(), "run")
	_, err := Train(context.Background(), tinyOmniglot(t), dir, opts)
	var cerr *configs.ConfigError
	if !errors.As(err, &cerr) || cerr.Field != "data.root" || !strings.Contains(err.Error(), "trmaml data omniglot -dir "+opts.DataRoot) {
		t.Fatalf("error %v, want a data.root error naming the fetch command", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run directory was created: %v", err)
	}
}

// TestOmniglotScoreIsAccuracy: the Setup of an Omniglot config scores
// evaluation by query accuracy, in [0, 1], not by the loss.
func TestOmniglotScoreIsAccuracy(t *testing.T) {
	forEachSource(t, func(t *testing.T, _ omniglotSource, opts Options) { testOmniglotScoreIsAccuracy(t, opts) })
}

func testOmniglotScoreIsAccuracy(t *testing.T, opts Options) {
	s, err := Build(tinyOmniglot(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Metric != metalearn.Accuracy || s.Support != 5 || s.Query != 25 {
		t.Fatalf("metric %v, %d support and %d query points; want accuracy, 5, 25", s.Metric, s.Support, s.Query)
	}
}

// TestEvaluationIndependentOfBatch: eval.batch sets how many instances
// run at once and what memory they take, never the values: the 25
// instances of each split get the same accuracies in graphs of 1, 3 and 8
// (the last two end on a batch of one instance and filler).
func TestEvaluationIndependentOfBatch(t *testing.T) {
	t.Parallel()
	opts := fixtureOptions(t)
	var first [2]rundir.Stats
	for i, batch := range []int{1, 3, 8} {
		c := tinyOmniglot(t)
		c.Eval.Batch = batch
		s, err := Build(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, err := s.init(rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		train, test, err := s.evaluate(context.Background(), w, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = [2]rundir.Stats{train, test}
			continue
		}
		for j, got := range []rundir.Stats{train, test} {
			if !reflect.DeepEqual(got.PerTask, first[j].PerTask) {
				t.Errorf("eval.batch %d: per-task accuracies %v, with 1: %v", batch, got.PerTask, first[j].PerTask)
			}
		}
	}
}

// TestOmniglotResume: an Omniglot run resumed from its checkpoint ends as
// an uninterrupted one (the data root comes from Options.DataRoot both times).
func TestOmniglotResume(t *testing.T) {
	forEachSource(t, func(t *testing.T, _ omniglotSource, opts Options) { testOmniglotResume(t, opts) })
}

func testOmniglotResume(t *testing.T, opts Options) {
	c := tinyOmniglot(t)
	c.Meta.Schedule = "constant" // the cosine depends on meta.iterations, edited below
	c.Meta.Iterations = 2
	partial := filepath.Join(t.TempDir(), "partial")
	if _, err := Train(context.Background(), c, partial, opts); err != nil {
		t.Fatal(err)
	}
	c = unfinish(t, c, partial, 4)
	if err := os.Remove(filepath.Join(partial, rundir.ModelFile)); err != nil {
		t.Fatal(err)
	}
	resumed, err := Resume(context.Background(), partial, opts)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Train(context.Background(), c, filepath.Join(t.TempDir(), "full"), opts)
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "resumed Omniglot run", resumed, full)
}

// TestOmniglotResizesMatch keeps the config's list of resizes the data
// package's.
func TestOmniglotResizesMatch(t *testing.T) {
	t.Parallel()
	if len(omniglottask.Resizes) != len(omniglot.Resizes) {
		t.Fatalf("omniglottask.Resizes %v, omniglot.Resizes %v", omniglottask.Resizes, omniglot.Resizes)
	}
	for i, r := range omniglot.Resizes {
		if omniglottask.Resizes[i] != string(r) {
			t.Errorf("omniglottask.Resizes %v, omniglot.Resizes %v", omniglottask.Resizes, omniglot.Resizes)
		}
	}
}

// TestUnwritableCacheWarnsOnce: a data root whose decoded-image cache cannot
// be written still loads, with one warning line naming the cache file.
func TestUnwritableCacheWarnsOnce(t *testing.T) {
	t.Parallel()
	var warn bytes.Buffer
	opts := fixtureOptions(t)
	opts.Datasets, opts.Warnings = new(configs.DataCache), &warn
	dir := filepath.Join(opts.DataRoot, "omniglot")
	// A directory where the cache file would go: unwritable even for root.
	for _, name := range []string{"decoded.cache", "decoded-lanczos.cache", "decoded-nearest.cache"} {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
	}
	if _, err := Build(tinyOmniglot(t), opts); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(warn.String(), "\n"); lines != 1 || !strings.Contains(warn.String(), filepath.Join(dir, "decoded")) {
		t.Errorf("warnings %q, want one line naming the cache file", warn.String())
	}
}
