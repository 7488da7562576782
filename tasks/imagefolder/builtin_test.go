package imagefolder

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/tasks/imagefolder/imagefoldertest"
)

// TestBuiltinMiniImageNet: the built-in mini-ImageNet configs read a
// folder in mini-ImageNet's layout under the data root into the TR-MAML
// code's 8 meta-training groups of 7, 7, 6, 8, 8, 9, 9, 10 classes and 4
// meta-test groups of 9, 9, 10, 8, colour 84x84 instances of 5 classes.
func TestBuiltinMiniImageNet(t *testing.T) {
	root := t.TempDir()
	if err := imagefoldertest.WriteMiniImageNet(filepath.Join(root, "miniimagenet"), 20); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var cache configs.DataCache
	for _, name := range []string{"miniimagenet_5way_1shot_maml", "miniimagenet_5way_1shot_trmaml", "miniimagenet_5way_5shot_maml", "miniimagenet_5way_5shot_trmaml"} {
		c, err := configs.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		sets, err := Family{}.Tasks(c, configs.Env{DataRoot: root, Cache: &cache})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tc := range []struct {
			set   metalearn.TaskSet
			sizes []int
			split string
		}{{sets.Train, []int{7, 7, 6, 8, 8, 9, 9, 10}, "train"}, {sets.Test, []int{9, 9, 10, 8}, "test"}} {
			ts := tc.set.(*TaskSet)
			if ts.Len() != len(tc.sizes) {
				t.Fatalf("%s: %d %s groups, want %d", name, ts.Len(), tc.split, len(tc.sizes))
			}
			for i, n := range tc.sizes {
				if ts.Classes(i) != n || ts.Name(i) != fmt.Sprintf("%s-%d", tc.split, i+1) {
					t.Errorf("%s: %s group %d is %s of %d classes, want %s-%d of %d", name, tc.split, i, ts.Name(i), ts.Classes(i), tc.split, i+1, n)
				}
			}
		}
		in, out := sets.Train.Dims()
		if in != 84*84*3 || out != 5 || sets.Support != 5*c.Task.Support || sets.Query != 75 {
			t.Errorf("%s: %d -> %d values, %d support and %d query images", name, in, out, sets.Support, sets.Query)
		}
		b := metalearn.NewBatch(1, sets.Support, sets.Query, in, out)
		sets.Train.Sample(0, rand.New(rand.NewPCG(1, 1)), b, 0)
		sets.EvalTest.Sample(3, rand.New(rand.NewPCG(1, 1)), b, 0)
	}
}

// TestBuiltinFC100: the built-in FC100 config reads class folders grouped
// by a superclass file into its 12 / 4 / 4 superclasses.
func TestBuiltinFC100(t *testing.T) {
	c, err := configs.Builtin("fc100_5way_1shot_trmaml")
	if err != nil {
		t.Fatal(err)
	}
	s := Section(c)
	var superclasses []string
	for _, list := range s.Splits.of() {
		superclasses = append(superclasses, list...)
	}
	root := t.TempDir()
	if err := imagefoldertest.WriteClasses(filepath.Join(root, "fc100"), superclasses, 5, 16, 32, "superclasses.csv"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	sets, err := Family{}.Tasks(c, configs.Env{DataRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if sets.Train.Len() != 12 || sets.Test.Len() != 4 || sets.Train.Name(0) != "fish" || sets.Test.Name(3) != "people" {
		t.Errorf("%d train and %d test superclasses, first %s, last %s", sets.Train.Len(), sets.Test.Len(), sets.Train.Name(0), sets.Test.Name(3))
	}
	if c.TaskNoun() != "superclass" {
		t.Errorf("tasks are called %q", c.TaskNoun())
	}
}
