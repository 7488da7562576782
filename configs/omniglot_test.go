package configs_test

import (
	. "github.com/trmaml/trmaml/configs"
	"strings"
	"testing"
)

// omniglotYAML is a minimal omniglot file that the cases below extend.
const omniglotYAML = "task:\n  family: omniglot\n  support: 1\n  query: 10\n"

func TestOmniglotRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown family", "task:\n  family: mnist\n", []string{`x.yaml:2: task.family = "mnist": is not registered (registered: sinusoid, omniglot, linreg`}},
		{"one way", omniglotYAML + "  omniglot:\n    ways: 1\n",
			[]string{`x.yaml:6: task.omniglot.ways = 1: must be in [2, 20]`}},
		{"more ways than the smallest alphabet", omniglotYAML + "  omniglot:\n    ways: 21\n",
			[]string{`x.yaml:6: task.omniglot.ways = 21: must be in [2, 20]: the smallest alphabet of a split (Angelic, meta-test) has 20 characters`}},
		{"more drawings than a character has", "task:\n  family: omniglot\n  support: 5\n  query: 16\n",
			[]string{`x.yaml:4: task.query = 16: must be <= 15 with task.support = 5: a character has 20 drawings`}},
		{"evaluation queries beyond the drawings", omniglotYAML + "eval:\n  query: 20\n",
			[]string{`x.yaml:6: eval.query = 20: must be <= 19 with task.support = 1`}},
		{"image too small for the blocks", omniglotYAML + "  omniglot:\n    image_size: 8\nmodel:\n  conv4:\n    blocks: 4\n",
			[]string{`x.yaml:9: model.conv4.blocks = 4: leaves no image: 8x8 inputs under 4 blocks of max pooling shrink to nothing at block 4 (at most 3 blocks)`}},
		{"no filters", omniglotYAML + "model:\n  conv4:\n    filters: 0\n",
			[]string{`x.yaml:7: model.conv4.filters = 0: must be in [1, 1024]`}},
		{"image larger than the drawings", omniglotYAML + "  omniglot:\n    image_size: 106\n",
			[]string{`x.yaml:6: task.omniglot.image_size = 106: must be in [1, 105]`}},
		{"unknown dtype", "model:\n  dtype: float16\n", []string{`x.yaml:2: model.dtype = "float16": must be one of float64, float32`}},
		{"bool as string", omniglotYAML + "  omniglot:\n    rotate: \"yes\"\n",
			[]string{`x.yaml:6: task.omniglot.rotate: cannot use "yes" (string): want true or false`}},
		{"negative final instances", "eval:\n  final_instances: -1\n",
			[]string{`x.yaml:2: eval.final_instances = -1: must be in [0, 10000000]`}},
		{"p_lr for ways the paper does not report", omniglotYAML + "  omniglot:\n    ways: 7\n",
			[]string{`x.yaml: trmaml.p_lr = (not set): must be stated for task.omniglot.ways = 7`}},
		{"unknown conv4 key", "model:\n  conv4:\n    width: 3\n",
			[]string{`x.yaml:3: unknown field "width" in model.conv4 (allowed: filters, blocks, pool, batch_norm, hidden)`}},
		{"unknown data key", "data:\n  dir: /x\n", []string{`x.yaml:2: unknown field "dir" in data (allowed: root)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// TestOmniglotDerivedDefaults: an omniglot file that leaves them out gets
// eval.query = task.query, the paper's 5,000 final instances and eta_p for
// its ways in Algorithm 1's convention; a sinusoid file keeps its defaults.
func TestOmniglotDerivedDefaults(t *testing.T) {
	t.Parallel()
	const small = "model:\n  conv4:\n    filters: 4\nmeta:\n  batch: 2\n" // within the memory limit at eval.batch 100
	for _, tc := range []struct {
		yaml              string
		evalQuery, final  int
		plr, entropic, cv float64
	}{
		{omniglotYAML, 10, 5000, 6.4e-6, 6.4e-5, 6.4e-6},
		{omniglotYAML + "  omniglot:\n    ways: 10\n", 10, 5000, 5.12e-6, 5.12e-5, 5.12e-6},
		{omniglotYAML + "  omniglot:\n    ways: 20\neval:\n  query: 5\n  final_instances: 100\n", 5, 100, 3.2e-6, 3.2e-5, 3.2e-6},
		{omniglotYAML + "  omniglot:\n    ways: 7\ntrmaml:\n  p_lr: 1e-5\n", 10, 5000, 1e-5, 1e-4, 1e-5},
		{"task:\n  support: 5\n", 1000, 0, 1e-4, 1e-3, 1e-4},
	} {
		c, err := Parse("x.yaml", []byte(small+tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		close := func(a, b float64) bool { return a == b || (a-b)/b < 1e-12 && (b-a)/b < 1e-12 }
		if c.Eval.Query != tc.evalQuery || c.Eval.FinalInstances != tc.final || !close(trmaml(c).PLR, tc.plr) ||
			!close(entropic(c).PLR, tc.entropic) || !close(cvar(c).PLR, tc.cv) {
			t.Errorf("%q: eval.query %d, final_instances %d, p_lr %v, entropic %v, cvar %v; want %d, %d, %v, %v, %v", tc.yaml,
				c.Eval.Query, c.Eval.FinalInstances, trmaml(c).PLR, entropic(c).PLR, cvar(c).PLR, tc.evalQuery, tc.final, tc.plr, tc.entropic, tc.cv)
		}
	}
}
