package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/tasks/imagefolder"
	"github.com/trmaml/trmaml/tasks/imagefolder/imagefoldertest"
)

// shrink are the -set flags that cut a built-in image config to a test's
// size: one iteration of two instances, 2 query images, the fewest
// evaluation instances that still measure every task, a 4-filter network
// with one inner step in training and two at evaluation. The data, the
// layout, the grouping, the image size and the channels stay the
// config's.
var shrink = []string{"-set", "meta.iterations=1", "-set", "meta.batch=2", "-set", "task.query=2", "-set", "eval.query=2",
	"-set", "eval.every=1", "-set", "eval.batch=4", "-set", "model.conv4.filters=4", "-set", "inner.steps=1", "-set", "eval.steps=2"}

// trainBuiltin trains the built-in config name on the data root root
// with shrink, the evaluation counts and the extra flags, and returns the
// run directory.
func trainBuiltin(t *testing.T, root, name string, train, test int, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	args := append([]string{"train", "-config", name, "-data", root, "-out", dir}, shrink...)
	args = append(args, "-set", fmt.Sprintf("eval.instances=%d", test), "-set", fmt.Sprintf("eval.train_instances=%d", train),
		"-set", fmt.Sprintf("eval.final_instances=%d", max(train, test)))
	var out, errOut bytes.Buffer
	if err := dispatch(append(args, extra...), &out, &errOut); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, errOut.String())
	}
	return dir
}

// TestBuiltinMiniImageNetTrains runs each built-in mini-ImageNet config
// end to end through trmaml train on a synthetic folder in mini-ImageNet's
// layout (train.csv, val.csv, test.csv over images/ of 84x84 colour
// JPEGs): the run reads colour 84x84 images into the TR-MAML code's 8
// meta-training groups and 4 meta-test groups and records them.
func TestBuiltinMiniImageNetTrains(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains four 84x84 colour configs")
	}
	root := t.TempDir()
	if err := imagefoldertest.WriteMiniImageNet(filepath.Join(root, "miniimagenet"), 7); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"miniimagenet_5way_1shot_maml", "miniimagenet_5way_1shot_trmaml", "miniimagenet_5way_5shot_maml", "miniimagenet_5way_5shot_trmaml"} {
		dir := trainBuiltin(t, root, name, 8, 4)
		cfg := mustRead(t, filepath.Join(dir, "config.yaml"))
		for _, want := range []string{"channels: 3", "image: [84, 84]", "train: [7, 7, 6, 8, 8, 9, 9, 10]", "test: [9, 9, 10, 8]"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("%s: config.yaml has no %q", name, want)
			}
		}
		res := readResultFile(t, dir)
		if got := strings.Join(res.MetaTest.Tasks, " "); got != "test-1 test-2 test-3 test-4" || len(res.MetaTrain.Tasks) != 8 {
			t.Errorf("%s: meta-test tasks %s and %d meta-training tasks, want test-1 to test-4 and 8", name, got, len(res.MetaTrain.Tasks))
		}
	}
}

// TestBuiltinTieredAndFC100Train runs the built-in tieredImageNet config
// (CSV splits and a category file over 84x84 JPEGs) and FC100 config
// (class folders of 32x32 PNGs and a superclass file) through trmaml
// train on synthetic folders in their layouts, keeping the model of the
// best meta-validation worst task: the tasks are the categories and the
// superclasses.
func TestBuiltinTieredAndFC100Train(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains two colour configs")
	}
	root := t.TempDir()
	// 2 meta-training, 1 meta-validation and 2 meta-test categories of 5
	// classes (g00 to g04).
	var splits []imagefoldertest.Split
	for i, sp := range []struct {
		file   string
		groups []int
	}{{"train.csv", []int{0, 1}}, {"val.csv", []int{2}}, {"test.csv", []int{3, 4}}} {
		splits = append(splits, imagefoldertest.Split{File: sp.file})
		for _, g := range sp.groups {
			for range 5 {
				splits[i].Groups = append(splits[i].Groups, g)
			}
		}
	}
	if err := imagefoldertest.WriteCSV(filepath.Join(root, "tieredimagenet"), splits, 7, 84, "categories.csv"); err != nil {
		t.Fatal(err)
	}
	c, err := configs.Builtin("fc100_5way_1shot_trmaml")
	if err != nil {
		t.Fatal(err)
	}
	sp := imagefolder.Section(c).Splits
	superclasses := append(append(append([]string{}, sp.Train...), sp.Validation...), sp.Test...)
	if err := imagefoldertest.WriteClasses(filepath.Join(root, "fc100"), superclasses, 5, 3, 32, "superclasses.csv"); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, noun  string
		train, test int
		firstTest   string
	}{
		{"tieredimagenet_5way_1shot_trmaml", "category", 2, 2, "g03"},
		{"fc100_5way_1shot_trmaml", "superclass", 12, 4, "aquatic_mammals"},
	} {
		dir := trainBuiltin(t, root, tc.name, tc.train, tc.test, "-set", "meta.output=best_val")
		res := readResultFile(t, dir)
		if len(res.MetaTrain.Tasks) != tc.train || len(res.MetaTest.Tasks) != tc.test || res.MetaTest.Tasks[0] != tc.firstTest {
			t.Errorf("%s: meta-training tasks %v, meta-test tasks %v", tc.name, res.MetaTrain.Tasks, res.MetaTest.Tasks)
		}
		if !strings.Contains(mustRead(t, filepath.Join(dir, "config.yaml")), "noun: "+tc.noun) {
			t.Errorf("%s: config.yaml does not call the tasks %ss", tc.name, tc.noun)
		}
		if mustRead(t, filepath.Join(dir, "validation.csv")) == "" {
			t.Errorf("%s: empty validation.csv", tc.name)
		}
	}
}
