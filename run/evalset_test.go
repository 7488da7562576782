package run

import (
	"errors"
	"strings"
	"testing"
)

// TestEvalSets: eval -set accepts the evaluation fields the run reads and
// refuses, listing what it reads, a field of another family (which would
// change nothing), a field that is not an evaluation's, and a build error
// caused by a -set names the flag, not config.yaml.
func TestEvalSets(t *testing.T) {
	t.Parallel()
	c := tinyConfig()
	for _, tc := range []struct {
		set, want string
	}{
		{"eval.query=10", ""},
		{"task.omniglot.rotate_eval=true", "-set task.omniglot.rotate_eval=true: task.omniglot.rotate_eval may not be changed here (a run of task family sinusoid reads, of what eval -set may change: eval.*)"},
		{"inner.alpha=0.1", "-set inner.alpha=0.1: inner.alpha may not be changed here"},
		{"eval.query=x", "-set eval.query=x"},
	} {
		got, err := evalSets(c, []string{tc.set})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("-set %s: %v", tc.set, err)
		case tc.want == "" && got.Eval.Query != 10:
			t.Errorf("-set %s: eval.query %d", tc.set, got.Eval.Query)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("-set %s: %v, want %q", tc.set, err, tc.want)
		}
	}
	build := errors.New("eval.final_instances: 5 is too few")
	if err := blameSets("run/config.yaml", []string{"eval.query=9", "eval.final_instances=5"}, build); !strings.HasPrefix(err.Error(), "-set eval.final_instances=5: eval.final_instances: 5 is too few") {
		t.Errorf("a build error of a -set: %v, want it to name the flag", err)
	}
	if err := blameSets("run/config.yaml", []string{"eval.query=9"}, errors.New("model.hidden: empty")); !strings.HasPrefix(err.Error(), "run/config.yaml: model.hidden") {
		t.Errorf("a build error of the config: %v, want it to name config.yaml", err)
	}
}
