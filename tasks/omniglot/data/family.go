package data

import (
	"errors"
	"fmt"
	"os"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/metalearn"
	family "github.com/trmaml/trmaml/tasks/omniglot"
)

func init() { configs.RegisterDataSide(family.Name, side{}) }

// side is the family's configs.DataSide: its Tasks (below) and its
// DataCommand (command.go).
type side struct{}

type datasetKey struct {
	dir     string
	size    int
	resize  Resize
	content string // the release's content hash
}

// dataset returns the dataset of the resolved data root, from env.Cache when
// another run loaded it.
func dataset(c configs.Config, env configs.Env) (*Dataset, error) {
	root, err := ResolveRoot(env.DataRoot, c.Data.Root)
	if err != nil {
		return nil, err
	}
	var release *Release
	if env.Release != nil {
		r, ok := env.Release.(*Release)
		if !ok {
			return nil, fmt.Errorf("tasks/omniglot: data release of type %T, want *data.Release of package tasks/omniglot/data", env.Release)
		}
		release = r
	}
	key := datasetKey{root.Dir, family.Section(c).ImageSize, Resize(family.Section(c).Resize), ContentSHA256}
	if release != nil {
		key.content = release.ContentSHA256
	}
	d, err := env.Cache.Load(key, func() (any, error) {
		d, err := Load(root.Dir, Options{Size: key.size, Resize: key.resize, Release: release})
		if err != nil {
			err = root.Annotate(err)
			if errors.Is(err, ErrMissing) {
				return nil, &configs.ConfigError{Field: "data.root", Problem: err.Error()}
			}
			return nil, err
		}
		if d.Info.CacheErr != nil {
			// One line, once per loaded data set: the run is unaffected,
			// but every start decodes the images again.
			w := env.Warnings
			if w == nil {
				w = os.Stderr
			}
			fmt.Fprintf(w, "trmaml: warning: the decoded Omniglot cache %s cannot be written, so the images are decoded again on every start: %v\n", d.Info.CachePath, d.Info.CacheErr)
		}
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return d.(*Dataset), nil
}

// Tasks implements configs.DataSide: the task sets of c: the alphabets of the two splits, N-way
// K-shot; an instance's points are ways times the per-class counts.
func (side) Tasks(c configs.Config, env configs.Env) (*configs.TaskSets, error) {
	d, err := dataset(c, env)
	if err != nil {
		return nil, err
	}
	oc, t := family.Section(c), c.Task
	sets := func(queries int, rotate bool) (train, test metalearn.TaskSet, err error) {
		spec := Spec{Ways: oc.Ways, Shots: t.Support, Queries: queries, Rotate: rotate}
		tr, err := NewTaskSet(d, Train, spec)
		if err != nil {
			return nil, nil, &configs.ConfigError{Field: "task.ways", Problem: err.Error()}
		}
		te, err := NewTaskSet(d, Test, spec)
		if err != nil {
			return nil, nil, &configs.ConfigError{Field: "task.ways", Problem: err.Error()}
		}
		return tr, te, nil
	}
	train, test, err := sets(t.Query, oc.Rotate)
	if err != nil {
		return nil, err
	}
	evalTrain, evalTest := train, test
	if c.Eval.Query != t.Query || oc.RotateEval != oc.Rotate {
		if evalTrain, evalTest, err = sets(c.Eval.Query, oc.RotateEval); err != nil {
			return nil, err
		}
	}
	// The validation alphabets (14 to 20 characters) serve up to 14-way
	// instances; beyond, a run has no validation tasks, and meta.output
	// best_val is refused.
	val, err := NewTaskSet(d, Validation, Spec{Ways: oc.Ways, Shots: t.Support, Queries: c.Eval.Query, Rotate: oc.RotateEval})
	if err != nil && c.Meta.Output == "best_val" {
		return nil, &configs.ConfigError{Field: "meta.output", Problem: "best_val: " + err.Error()}
	}
	return &configs.TaskSets{
		Train: train, Test: test, EvalTrain: evalTrain, EvalTest: evalTest, EvalValidation: validation(val),
		Support: oc.Ways * t.Support, Query: oc.Ways * t.Query, EvalQuery: oc.Ways * c.Eval.Query,
	}, nil
}

// validation is ts as a task set, nil when there is none (a nil
// *TaskSet is not a nil metalearn.TaskSet).
func validation(ts *TaskSet) metalearn.TaskSet {
	if ts == nil {
		return nil
	}
	return ts
}
