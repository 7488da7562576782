package configs

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Validate checks every field's range and returns all violations joined, each
// naming the field path and what is allowed. It knows no file or line; Load
// and Parse add them.
func (c Config) Validate() error { return errors.Join(c.validate()...) }

// validate returns every range violation as a *fieldError.
func (c Config) validate() []error {
	var k Checker
	if !validName.MatchString(c.Name) {
		k.fail("name", c.Name, "must be non-empty and use only A-Z a-z 0-9 _ . -")
	} else if len(c.Name) > MaxName {
		k.fail("name", c.Name, "is %d bytes, at most %d: it names the run's directory", len(c.Name), MaxName)
	}
	k.oneOf("algorithm", c.Algorithm, metalearn.MethodNames()...)
	k.oneOf("order", c.Order, "second", "first")

	t := c.Task
	k.between("task.support", t.Support, 1, MaxPoints)
	k.between("task.query", t.Query, 1, MaxPoints)
	fam, famErr := c.Family()
	if famErr != nil {
		k.fail("task.family", t.Family, "is not registered (registered: %s)", strings.Join(FamilyNames(), ", "))
	} else {
		fam.Check(c, &k)
	}

	k.oneOf("model.dtype", c.Model.Dtype, "float64", "float32")
	model, modelErr := ModelNamed(c.Model.Kind)
	if modelErr != nil {
		k.fail("model.kind", c.Model.Kind, "is not registered (registered: %s)", strings.Join(ModelNames(), ", "))
	} else if famErr == nil {
		model.Check(c, fam.IO(c), &k)
	}

	if l, ok := LookupInnerLoop(c.Inner.Kind); !ok {
		k.fail("inner.kind", c.Inner.Kind, "is not registered (registered: %s)", strings.Join(InnerLoopNames(), ", "))
	} else {
		l.Check(c, &k)
	}
	k.between("inner.steps", c.Inner.Steps, 1, MaxSteps)
	k.float("inner.alpha", c.Inner.Alpha, c.Inner.Alpha > 0, "> 0")

	o := c.Meta
	k.between("meta.iterations", o.Iterations, 1, MaxIterations)
	k.between("meta.batch", o.Batch, 1, MaxBatch)
	k.oneOf("meta.optimizer", o.Optimizer, "adam", "sgd")
	k.float("meta.lr", o.LR, o.LR > 0, "> 0")
	k.oneOf("meta.schedule", o.Schedule, "constant", "cosine")
	k.float("meta.lr_min", o.LRMin, o.LRMin >= 0 && o.LRMin <= o.LR, fmt.Sprintf("in [0, meta.lr] = [0, %v]", o.LR))
	k.float("meta.ball_radius", o.BallRadius, o.BallRadius >= 0, ">= 0 (0: unconstrained)")
	k.oneOf("meta.output", o.Output, "last", "T1", "T2", "best_val")

	for _, info := range metalearn.Methods() {
		if m := c.Methods[info.Name]; m != nil && info.Check != nil {
			for _, e := range info.Check(m) {
				k.fail(info.Name+"."+e.Key, e.Value, "%s", e.Rule)
			}
		}
	}
	if len(k.errs) == 0 {
		if _, err := c.DrawnBatch(); err != nil {
			k.errs = append(k.errs, err)
		}
	}

	e := c.Eval
	k.between("eval.every", e.Every, 1, MaxIterations)
	k.between("eval.instances", e.Instances, 1, MaxInstances)
	k.between("eval.train_instances", e.TrainInstances, 1, MaxInstances)
	k.between("eval.query", e.Query, 1, MaxEvalQuery)
	k.between("eval.batch", e.Batch, 1, MaxBatch)
	k.between("eval.final_instances", e.FinalInstances, 0, MaxInstances)
	k.between("eval.steps", e.Steps, 0, MaxSteps)
	k.oneOf("eval.select", e.Select, "", "worst", "mean", "cvar")
	if e.Select == "cvar" && len(e.CVaRAlpha) == 0 {
		k.fail("eval.select", e.Select, "needs a level in eval.cvar_alpha")
	}
	for i, a := range e.CVaRAlpha {
		path := fmt.Sprintf("eval.cvar_alpha[%d]", i)
		k.float(path, a, a > 0 && a < 1, "in (0, 1)")
		if j := slices.Index(e.CVaRAlpha, a); j >= 0 && j < i {
			k.fail(path, a, "repeats eval.cvar_alpha[%d]: each level once", j)
		}
	}
	if len(k.errs) == 0 && famErr == nil {
		k.checkMemory(c)
	}
	return k.errs
}

// fieldError is a range violation of the field at path (e.g. "inner.alpha").
type fieldError struct{ path, value, rule string }

func (e *fieldError) Error() string { return e.path + " = " + e.value + ": " + e.rule }

// Checker collects the violations found by Validate; a Family's Check
// reports through its methods, each naming the field path.
type Checker struct{ errs []error }

// Fail reports that the field at path has value v, which breaks rule (a
// format for args).
func (k *Checker) Fail(path string, v any, rule string, args ...any) { k.fail(path, v, rule, args...) }

// Err returns the violations found so far, joined, or nil: what a
// section's Check reported, for its tests.
func (k *Checker) Err() error { return errors.Join(k.errs...) }

// OneOf checks that v is one of allowed.
func (k *Checker) OneOf(path, v string, allowed ...string) { k.oneOf(path, v, allowed...) }

// Between checks lo <= v <= hi.
func (k *Checker) Between(path string, v, lo, hi int) { k.between(path, v, lo, hi) }

// Float checks that v is finite and that ok holds, which rule describes
// ("> 0").
func (k *Checker) Float(path string, v float64, ok bool, rule string) { k.float(path, v, ok, rule) }

// Interval checks that a range [lo, hi] is finite and that ok holds, which
// rule describes.
func (k *Checker) Interval(path string, v [2]float64, ok bool, rule string) {
	k.interval(path, v, ok, rule)
}

func (k *Checker) fail(path string, v any, rule string, args ...any) {
	k.errs = append(k.errs, &fieldError{path, show(v), fmt.Sprintf(rule, args...)})
}

func (k *Checker) oneOf(path, v string, allowed ...string) {
	if !slices.Contains(allowed, v) {
		shown := slices.Clone(allowed)
		for i, a := range shown {
			if a == "" {
				shown[i] = `""` // the empty value is allowed: say so visibly
			}
		}
		k.fail(path, v, "must be one of %s", strings.Join(shown, ", "))
	}
}

// between checks lo <= v <= hi; hi is the field's upper bound (bounds.go).
func (k *Checker) between(path string, v, lo, hi int) {
	if v < lo || v > hi {
		k.fail(path, v, "must be in [%d, %d]", lo, hi)
	}
}

// float checks that v is finite and that ok holds, which rule describes.
func (k *Checker) float(path string, v float64, ok bool, rule string) {
	switch {
	case !finite(v):
		k.fail(path, v, "%s", strings.TrimSpace("must be a finite number "+rule))
	case !ok:
		k.fail(path, v, "must be %s", rule)
	}
}

// interval checks that a range [lo, hi] is finite and that ok holds.
func (k *Checker) interval(path string, v [2]float64, ok bool, rule string) {
	switch {
	case !finite(v[0]) || !finite(v[1]):
		k.fail(path, v, "must be [lo, hi] of finite numbers %s", rule)
	case !ok:
		k.fail(path, v, "must be [lo, hi] %s", rule)
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// show formats a field value for an error message.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case [2]float64:
		return fmt.Sprintf("[%v, %v]", v[0], v[1])
	}
	return fmt.Sprint(v)
}

// NotSet returns the error of a field the file must state because no
// default fits, with the reason; Locate places it in the file.
func NotSet(path, rule string) error { return &fieldError{path, "(not set)", rule} }

// FieldError returns an error for the field at path, with its value and the
// rule it breaks, that Locate can place at the field's line.
func FieldError(path string, value any, rule string) error {
	return &fieldError{path, show(value), rule}
}

// CheckSets refuses what the family's task sets make impossible: fewer
// evaluation instances than the train meta-training or test meta-test
// tasks, which leaves a task unmeasured, and best_val without
// meta-validation tasks.
func (c Config) CheckSets(train, test int, validation bool) error {
	e := c.Eval
	for _, n := range []struct {
		field string
		v, n  int
		what  string
	}{
		{"eval.instances", e.Instances, test, "meta-test"},
		{"eval.train_instances", e.TrainInstances, train, "meta-training"},
		{"eval.final_instances", e.FinalInstances, max(train, test), "meta-training or meta-test"},
	} {
		if n.v < n.n && (n.field != "eval.final_instances" || n.v != 0) {
			return &ConfigError{Field: n.field, Problem: fmt.Sprintf("%d is too few: must be >= %d, the number of %s tasks, so that every task is measured", n.v, n.n, n.what)}
		}
	}
	if c.Meta.Output == "best_val" && !validation {
		return &ConfigError{Field: "meta.output", Problem: fmt.Sprintf("best_val needs meta-validation tasks, and this config's %s tasks have none", c.Task.Family)}
	}
	return nil
}
