package run

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
	"github.com/trmaml/trmaml/models/mlp"
	"github.com/trmaml/trmaml/rundir"
)

// unfinished returns a run directory stopped after its checkpoint at
// iteration 20 of 30.
func unfinished(t *testing.T) string {
	t.Helper()
	c := tinyConfig()
	c.Meta.Iterations = 20
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Train(context.Background(), c, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	c.Meta.Iterations = 30
	yml, _ := c.Marshal()
	os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
	os.Remove(filepath.Join(dir, rundir.ResultFile))
	os.Remove(filepath.Join(dir, rundir.ModelFile))
	rebind(t, dir)
	return dir
}

// rebind binds the checkpoint in dir to the config.yaml beside it and
// seals the directory as unfinished, as a test that edits a run's config
// on purpose must (trmaml seal refuses it: the checkpoint was not written
// under that config).
func rebind(t *testing.T, dir string) {
	t.Helper()
	rehash(t, dir, func(map[string]any) {})
	reseal(t, dir)
}

// reseal seals dir as it is, as a bug that wrote inconsistent state and
// sealed it would: the checks beyond the manifest must refuse it.
func reseal(t *testing.T, dir string) {
	t.Helper()
	os.Remove(filepath.Join(dir, rundir.ManifestFile))
	if err := rundir.Seal(dir, false); err != nil {
		t.Fatal(err)
	}
}

// rehash rewrites the checkpoint in dir after edit changes its JSON object,
// with a valid hash and the identity of the config.yaml beside it, as a bug
// writing inconsistent state would.
func rehash(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, rundir.CheckpointFile)
	raw, _ := os.ReadFile(path)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	yml, _ := os.ReadFile(filepath.Join(dir, rundir.ConfigFile))
	m["config_sha256"] = rundir.HashBytes(yml)
	delete(m, "sha256")
	b, _ := json.Marshal(m)
	var ck rundir.Checkpoint
	json.Unmarshal(b, &ck) // drops unknown fields, which stay in the file
	enc, err := encodeCheckpoint(t, ck)
	if err != nil {
		t.Fatal(err)
	}
	var hashed rundir.Checkpoint
	json.Unmarshal(enc, &hashed)
	m["sha256"] = hashed.SHA256
	b, _ = json.Marshal(m)
	os.WriteFile(path, b, 0o644)
}

// damagedStateCases are the damaged or mismatched run directories Resume
// (and eval of an unfinished run) must refuse, each with what the message
// must say. The count is reported in issue 9's closing note.
var damagedStateCases = []struct {
	name, want string
	damage     func(t *testing.T, dir string)
}{
	{"changed weight", "checkpoint.json: sha256: does not match the content", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.CheckpointFile)
		raw, _ := os.ReadFile(p)
		i := strings.Index(string(raw), `"W":[`) + 5
		os.WriteFile(p, []byte(string(raw[:i])+"1"+string(raw[i:])), 0o644)
	}},
	{"emptied hash", "checkpoint.json: sha256: does not match the content", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.CheckpointFile)
		raw, _ := os.ReadFile(p)
		var m map[string]any
		json.Unmarshal(raw, &m)
		m["sha256"] = ""
		b, _ := json.Marshal(m)
		os.WriteFile(p, b, 0o644)
	}},
	{"truncated", "checkpoint.json: unexpected EOF", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.CheckpointFile)
		raw, _ := os.ReadFile(p)
		os.WriteFile(p, raw[:len(raw)/2], 0o644)
	}},
	{"unknown field", `checkpoint.json: json: unknown field "extra"`, func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["extra"] = 1 })
	}},
	{"optimizer null", "checkpoint.json: optimizer: missing", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"] = nil })
	}},
	{"optimizer {}", "checkpoint.json: optimizer.T = 0, want 20", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"] = map[string]any{} })
	}},
	{"T 0", "checkpoint.json: optimizer.T = 0, want 20", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"].(map[string]any)["T"] = 0 })
	}},
	{"NaN-free but negative V", "checkpoint.json: optimizer.V[0] = -1: must be finite and >= 0", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"].(map[string]any)["V"].([]any)[0] = -1 })
	}},
	{"other learning rate", "checkpoint.json: optimizer: hyperparameters [0.5,0.9,0.999,1e-8], the config gives [0.001,0.9,0.999,1e-8]", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"].(map[string]any)["LR"] = 0.5 })
	}},
	{"SGD state for Adam", `checkpoint.json: optimizer: json: unknown field "Momentum"`, func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["optimizer"] = map[string]any{"LR": 0.001, "Momentum": 0.9} })
	}},
	{"zeroed p", "checkpoint.json: state.P: the task weights sum to 0", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) {
			p := m["state"].(map[string]any)["P"].([]any)
			for i := range p {
				p[i] = 0
			}
		})
	}},
	{"p outside the CVaR level's capped simplex", "checkpoint.json: state.P[0] = 1: above the cap 1/(a n) = ", func(t *testing.T, dir string) {
		c := tinyConfig()
		c.Meta.Iterations = 30
		c.Algorithm, c.Settings("cvar").(*metalearn.CVaR).Level = "cvar", 0.5
		yml, _ := c.Marshal()
		os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
		rehash(t, dir, func(m map[string]any) {
			p := m["state"].(map[string]any)["P"].([]any)
			for i := range p {
				p[i] = 0
			}
			p[0] = 1
		})
	}},
	{"TR-MAML's p under a MAML config", "MAML keeps p at the empirical distribution", func(t *testing.T, dir string) {
		c := tinyConfig()
		c.Meta.Iterations = 30
		c.Algorithm = "maml"
		yml, _ := c.Marshal()
		os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
		rehash(t, dir, func(map[string]any) {})
	}},
	{"short w", "checkpoint.json: state.W: 3 parameters, the model of config.yaml has 25", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["state"].(map[string]any)["W"] = []any{1, 2, 3} })
	}},
	{"iteration past the end", "checkpoint.json: iteration 99 but metrics.csv and p.csv have no row", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["state"].(map[string]any)["Iteration"] = 99 })
	}},
	{"bad RNG", "checkpoint.json: state.RNG", func(t *testing.T, dir string) {
		rehash(t, dir, func(m map[string]any) { m["state"].(map[string]any)["RNG"] = "AAAA" })
	}},
	{"config changed under the checkpoint", "checkpoint.json: state.W: 25 parameters, the model of config.yaml has 21", func(t *testing.T, dir string) {
		c := tinyConfig()
		c.Meta.Iterations = 30
		mlp.Section(c).Hidden = []int{4, 2}
		yml, _ := c.Marshal()
		os.WriteFile(filepath.Join(dir, rundir.ConfigFile), yml, 0o644)
		rehash(t, dir, func(map[string]any) {})
	}},
	{"garbage metrics row", "metrics.csv: the rows through iteration 20 are not those checkpoint.json was written with", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.MetricsFile)
		raw, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		lines[2] = "10,x\n"
		os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	}},
	{"NaN metrics value", "metrics.csv: the rows through iteration 20 are not those checkpoint.json", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.MetricsFile)
		raw, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		lines[1] = "0,1,,,NaN,1,1,1,1,1\n"
		os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	}},
	{"metrics cut before the checkpoint", "metrics.csv: no complete row for iteration 20", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.MetricsFile)
		raw, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(raw), "\n")
		os.WriteFile(p, []byte(strings.Join(lines[:3], "")), 0o644)
	}},
	{"p.csv header of another task set", "p.csv: the rows through iteration 20 are not those checkpoint.json", func(t *testing.T, dir string) {
		p := filepath.Join(dir, rundir.PFile)
		raw, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(raw), "iteration,", "iteration,extra,", 1)), 0o644)
	}},
}

// TestResumeRefusesDamagedState: each damaged or mismatched state is
// refused with the file and the field, and nothing is written; an undamaged
// copy resumes. Each is sealed after the damage, so that these are the
// checks beyond the manifest (the damage suite, damage_test.go, covers the
// manifest's own).
func TestResumeRefusesDamagedState(t *testing.T) {
	t.Parallel()
	for _, c := range damagedStateCases {
		dir := unfinished(t)
		c.damage(t, dir)
		reseal(t, dir)
		before, _ := os.ReadFile(filepath.Join(dir, rundir.CheckpointFile))
		_, err := Resume(context.Background(), dir, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: resume error\n%v\nwant it to contain\n%s", c.name, err, c.want)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, rundir.CheckpointFile)); string(after) != string(before) {
			t.Errorf("%s: a refused resume changed the checkpoint", c.name)
		}
	}
	t.Logf("%d damaged-state cases refused", len(damagedStateCases))
	if _, err := Resume(context.Background(), unfinished(t), Options{}); err != nil {
		t.Errorf("undamaged: %v", err)
	}
}

// FuzzDecodeCheckpoint: no checkpoint file makes the reader or Restore
// panic; one that passes both resumes a run.
func FuzzDecodeCheckpoint(f *testing.F) {
	dir := f.TempDir()
	c := tinyConfig()
	c.Meta.Iterations = 10
	mlp.Section(c).Hidden = []int{2}
	c.Eval.Batch = 10
	s, err := Build(c, Options{})
	if err != nil {
		f.Fatal(err)
	}
	// A valid checkpoint of s after three iterations, built without the
	// evaluations of a run: each fuzzing process repeats this setup.
	ss, err := newSession(s, dir, make([]float64, s.Objective.NumParams()))
	if err != nil {
		f.Fatal(err)
	}
	for range 3 {
		if _, err := ss.tr.Step(); err != nil {
			f.Fatal(err)
		}
	}
	snap, err := ss.tr.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	opt, _ := json.Marshal(ss.opt)
	valid, err := encodeCheckpoint(f, rundir.Checkpoint{State: snap, Optimizer: opt, Seed: c.Seed, ConfigSHA256: "seed"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"state":{},"optimizer":null,"sha256":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ck, err := rundir.DecodeCheckpoint("f.json", data)
		if err != nil || len(ck.State.W) != s.Objective.NumParams() {
			return
		}
		ss, err := newSession(s, dir, ck.State.W)
		if err != nil {
			return
		}
		if restoreOptimizer(ss.opt, ck.Optimizer) != nil {
			return
		}
		ss.tr.Restore(ck.State)
	})
}

// encodeCheckpoint is the JSON of ck with its hash, as
// rundir.WriteCheckpoint writes it.
func encodeCheckpoint(t testing.TB, ck rundir.Checkpoint) ([]byte, error) {
	path := filepath.Join(t.TempDir(), rundir.CheckpointFile)
	if _, err := rundir.WriteCheckpoint(path, ck); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
