package configs_test

import (
	. "github.com/trmaml/trmaml/configs"
	"strings"
	"testing"
)

// TestSizeBounds refuses every size field just past its bound (and at the
// values that crashed or exhausted memory before bounds existed), naming
// file, line, field and the allowed range, and accepts it at the bound when
// that fits in memory.
func TestSizeBounds(t *testing.T) {
	t.Parallel()
	const huge = "9223372036854775807"
	for _, tc := range []struct{ yaml, want string }{
		{"task:\n  support: 10001\n", "x.yaml:2: task.support = 10001: must be in [1, 10000]"},
		{"task:\n  support: " + huge + "\n", "x.yaml:2: task.support = " + huge + ": must be in [1, 10000]"},
		{"task:\n  query: 10001\n", "x.yaml:2: task.query = 10001: must be in [1, 10000]"},
		{"meta:\n  batch: 10001\n", "x.yaml:2: meta.batch = 10001: must be in [1, 10000]"},
		{"meta:\n  batch: " + huge + "\n", "x.yaml:2: meta.batch = " + huge + ": must be in [1, 10000]"},
		{"meta:\n  iterations: 100000001\n", "x.yaml:2: meta.iterations = 100000001: must be in [1, 100000000]"},
		{"eval:\n  batch: 10001\n", "x.yaml:2: eval.batch = 10001: must be in [1, 10000]"},
		{"eval:\n  query: 100001\n", "x.yaml:2: eval.query = 100001: must be in [1, 100000]"},
		{"eval:\n  query: " + huge + "\n", "x.yaml:2: eval.query = " + huge + ": must be in [1, 100000]"},
		{"eval:\n  instances: 10000001\n", "x.yaml:2: eval.instances = 10000001: must be in [1, 10000000]"},
		{"eval:\n  train_instances: 1000000000\n", "x.yaml:2: eval.train_instances = 1000000000: must be in [1, 10000000]"},
		{"eval:\n  every: 100000001\n", "x.yaml:2: eval.every = 100000001: must be in [1, 100000000]"},
		{"model:\n  mlp:\n    hidden: [40, " + huge + "]\n", "x.yaml:3: model.mlp.hidden[1] = " + huge + ": must be in [1, 100000]"},
		{"model:\n  mlp:\n    hidden: [1000000000]\n", "x.yaml:3: model.mlp.hidden[0] = 1000000000: must be in [1, 100000]"},
		{"inner:\n  steps: 1000000\n", "x.yaml:2: inner.steps = 1000000: must be in [1, 100]"},
		{"model:\n  mlp:\n    hidden: [" + strings.Repeat("1, ", 16) + "1]\n", `x.yaml:3: model.mlp.hidden = "a list of 17": must have at most 16 entries`},
		{"task:\n  sinusoid:\n    task_width: 1e-9\n", "x.yaml:3: task.sinusoid.task_width = 1e-09: makes 4.9e+09 meta-test tasks of test_amplitudes [0.1, 5]: at most 100000 are allowed"},
		// Each within its bound, together beyond the memory limit.
		{"eval:\n  batch: 10000\n  query: 100000\n", "x.yaml:2: eval.batch = 10000: the config needs about 2444.50 GiB"},
		{"model:\n  mlp:\n    hidden: [100000, 100000]\n", "x.yaml:3: model.mlp.hidden = [100000 100000]: the config needs about 46201.45 GiB (training graph 15500.81 GiB"},
		{"meta:\n  iterations: 100000000\neval:\n  every: 1\n", "x.yaml:4: eval.every = 1: the config needs about 251.77 GiB"},
	} {
		_, err := Parse("x.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error\n%v\nwant it to contain\n%s", tc.yaml, err, tc.want)
		}
	}
	for _, ok := range []string{
		"task:\n  support: 10\n  query: 10000\n",
		"model:\n  mlp:\n    hidden: [" + strings.Repeat("40, ", 15) + "40]\n",
		"inner:\n  steps: 100\n",
		"eval:\n  instances: 10000000\n  train_instances: 10000000\n",
	} {
		if _, err := Parse("x.yaml", []byte(ok)); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// TestHugeInputRefusedBeforeDecoding: a file beyond MaxFileBytes (a 50 MB
// list of hidden sizes took the loader to 6.6 GB) is refused from its size.
func TestHugeInputRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	data := []byte("model:\n  mlp:\n    hidden: [" + strings.Repeat("1, ", 1<<20) + "1]\n")
	_, err := Parse("x.yaml", data)
	if err == nil || !strings.Contains(err.Error(), "x.yaml: 3145758 bytes: a file may have at most 65536") {
		t.Errorf("error %v", err)
	}
	// Within the size bound, a list longer than any schema list is refused
	// before it is decoded.
	data = []byte("task:\n  sinusoid:\n    train_amplitudes: [" + strings.Repeat("[1, 2], ", 1200) + "[1, 2]]\n")
	if _, err := Parse("x.yaml", data); err == nil || !strings.Contains(err.Error(), "x.yaml:3: task.sinusoid.train_amplitudes: a list of 1201: at most 1000 entries are allowed") {
		t.Errorf("error %v", err)
	}
}

// TestMemoryEstimatePaperConfigs pins the estimate of the paper's settings
// (about 0.32 GiB, dominated by scoring 100 instances on 1000 points) well
// under the limit, so the limit refuses only configs far from the paper.
func TestMemoryEstimatePaperConfigs(t *testing.T) {
	t.Parallel()
	for _, name := range BuiltinNames() {
		c, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		m := c.Memory()
		if io, err := c.IO(); err == nil && io.Classes {
			// The CNN's activations: the paper's Omniglot settings need 0.45
			// GiB (5-way 1-shot) to 2.3 GiB (20-way 5-shot), MAML's
			// mini-ImageNet network 1.5 to 2.7 GiB.
			if m.Total() < 128<<20 || m.Total() > MaxMemory {
				t.Errorf("%s: estimate %s, want between 0.125 GiB and the limit", name, Gib(m.Total()))
			}
			continue
		}
		if m.Total() < 64<<20 || m.Total() > 1<<30 {
			t.Errorf("%s: estimate %s, want between 64 MiB and 1 GiB", name, Gib(m.Total()))
		}
	}
}

// TestKDerivedDefaults: trmaml.p_lr follows K when left out, and must be
// stated for a K the paper does not report; eval.query does not depend on K.
func TestKDerivedDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		plr  float64
	}{
		{"algorithm: trmaml\n", 1e-4},
		{"algorithm: trmaml\ntask:\n  support: 10\n  query: 10\n", 2e-4},
		{"task:\n  support: 10\ntrmaml:\n  p_lr: 3e-5\n", 3e-5},
		{"task:\n  support: 7\ntrmaml:\n  p_lr: 5e-5\n", 5e-5},
	} {
		c, err := Parse("x.yaml", []byte(tc.yaml))
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if trmaml(c).PLR != tc.plr || cvar(c).PLR != tc.plr || entropic(c).PLR != 10*tc.plr {
			t.Errorf("%q: p_lr %v, cvar %v, entropic %v, want %v, %v, %v", tc.yaml, trmaml(c).PLR, cvar(c).PLR, entropic(c).PLR, tc.plr, tc.plr, 10*tc.plr)
		}
		if c.Eval.Query != 1000 {
			t.Errorf("%q: eval.query %d, want 1000 for every K", tc.yaml, c.Eval.Query)
		}
	}
	if c, err := Parse("x.yaml", []byte("task:\n  support: 10\ncvar:\n  p_lr: 0.5\n")); err != nil || cvar(c).PLR != 0.5 || entropic(c).PLR != 2e-3 {
		t.Errorf("stated cvar.p_lr: %+v %v", *cvar(c), err)
	}
	_, err := Parse("x.yaml", []byte("algorithm: trmaml\ntask:\n  support: 7\n"))
	if err == nil || !strings.Contains(err.Error(), "x.yaml: trmaml.p_lr = (not set): must be stated for task.support = 7") {
		t.Errorf("K=7 without p_lr: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "p_lr = 0") {
		t.Errorf("K=7 without p_lr: the unresolved step sizes are refused again as 0:\n%v", err)
	}
	_, err = Parse("x.yaml", []byte("task:\n  support: 7\nmeta:\n  iterations: 0\n"))
	if err == nil || !strings.Contains(err.Error(), "meta.iterations = 0") {
		t.Errorf("K=7 without p_lr and 0 iterations: %v, want both refused", err)
	}
}

// FuzzParse: no input makes the loader panic, and every config it accepts
// is within the bounds and marshals back to itself.
func FuzzParse(f *testing.F) {
	// Small seeds: the commented built-in files make the fuzzer crawl.
	f.Add([]byte("algorithm: trmaml\ntask:\n  support: 10\n  query: 10\n"))
	f.Add([]byte("model:\n  mlp:\n    hidden: [40, 40]\ninner:\n  steps: 2\n"))
	f.Add([]byte("task:\n  sinusoid:\n    phase_max: 2pi\n    train_amplitudes: [[0.1, 1], [4, 5]]\n"))
	f.Add([]byte("model:\n  mlp:\n    hidden: [40, 9223372036854775807]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("eval:\n  query: 1e9\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		if c.Memory().Total() > MaxMemory {
			t.Fatalf("accepted a config estimated at %s", Gib(c.Memory().Total()))
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("back.yaml", out); err != nil {
			t.Fatalf("accepted config does not read back: %v\n%s", err, out)
		}
	})
}

// TestMemoryCountsCandidates: the training graph of DR-MAML adapts its
// candidate batch, not meta.batch: its estimate is MAML's at a meta-batch
// of the candidates (meta.batch 8 at alpha 0.5: 15).
func TestMemoryCountsCandidates(t *testing.T) {
	t.Parallel()
	parse := func(yaml string) MemoryEstimate {
		c, err := Parse("x.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return c.Memory()
	}
	dr := parse("algorithm: drmaml\nmeta:\n  batch: 8\ndrmaml:\n  alpha: 0.5\n")
	maml15 := parse("algorithm: maml\nmeta:\n  batch: 15\n")
	maml8 := parse("algorithm: maml\nmeta:\n  batch: 8\n")
	if dr.TrainGraph != maml15.TrainGraph || !(dr.TrainGraph > maml8.TrainGraph) {
		t.Errorf("DR-MAML's training graph %.0f bytes, want MAML's at meta.batch 15 (%.0f), more than at 8 (%.0f)", dr.TrainGraph, maml15.TrainGraph, maml8.TrainGraph)
	}
}
