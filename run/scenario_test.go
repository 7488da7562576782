package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/internal/dirlock"
	"github.com/trmaml/trmaml/rundir"
)

// scenarioEnv is what a damage scenario may use: the run directory being
// damaged, the same run of another seed, and a file outside the directory
// that nothing may write.
type scenarioEnv struct {
	dir, other, victim string
}

func (e scenarioEnv) path(name string) string { return filepath.Join(e.dir, name) }

// copyFrom replaces name with the other seed's file.
func (e scenarioEnv) copyFrom(t *testing.T, name string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.other, name))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(e.path(name), raw, 0o644)
}

// editManifest changes manifest.json's JSON object, as jq would.
func (e scenarioEnv) editManifest(t *testing.T, edit func(m map[string]any)) {
	t.Helper()
	raw, _ := os.ReadFile(e.path(rundir.ManifestFile))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ := json.MarshalIndent(m, "", "  ")
	os.WriteFile(e.path(rundir.ManifestFile), b, 0o644)
}

// dropEntry removes file name's entry from the manifest.
func dropEntry(name string) func(map[string]any) {
	return func(m map[string]any) {
		var kept []any
		for _, f := range m["files"].([]any) {
			if f.(map[string]any)["name"] != name {
				kept = append(kept, f)
			}
		}
		m["files"] = kept
	}
}

// flipEntry changes the hash of file name's entry in the manifest.
func flipEntry(name string) func(map[string]any) {
	return func(m map[string]any) {
		for _, f := range m["files"].([]any) {
			if e := f.(map[string]any); e["name"] == name {
				h := []byte(e["sha256"].(string))
				h[0] = "10"[h[0]&1]
				e["sha256"] = string(h)
			}
		}
	}
}

// editByte changes the digit at a third of file name.
func (e scenarioEnv) editByte(t *testing.T, name string) {
	t.Helper()
	raw, _ := os.ReadFile(e.path(name))
	i := len(raw) / 3
	for raw[i] < '1' || raw[i] > '9' {
		i++
	}
	raw[i] = '0'
	os.WriteFile(e.path(name), raw, 0o644)
}

// damageScenario is one way of damaging a run directory, with the outcome
// each command must have: refused naming Want (DIR/Want: or DIR has no
// Want), or, for the commands in Accept (or all, for Want "harmless"), the
// undamaged directory's output. Seal, if not empty, is the file trmaml seal
// must blame after manifest.json was removed ("ok": seal accepts); the
// commands then run on what seal left.
type damageScenario struct {
	name     string
	finished bool
	damage   func(t *testing.T, e scenarioEnv)
	seal     string
	want     string
	accept   []string
}

// rmManifest is the damage before a seal: the refusals advised it.
func rmManifest(t *testing.T, e scenarioEnv) { os.Remove(e.path(rundir.ManifestFile)) }

func then(fs ...func(t *testing.T, e scenarioEnv)) func(t *testing.T, e scenarioEnv) {
	return func(t *testing.T, e scenarioEnv) {
		for _, f := range fs {
			f(t, e)
		}
	}
}

func other(name string) func(t *testing.T, e scenarioEnv) {
	return func(t *testing.T, e scenarioEnv) { e.copyFrom(t, name) }
}

func edit(name string) func(t *testing.T, e scenarioEnv) {
	return func(t *testing.T, e scenarioEnv) { e.editByte(t, name) }
}

func manifest(f func(map[string]any)) func(t *testing.T, e scenarioEnv) {
	return func(t *testing.T, e scenarioEnv) { e.editManifest(t, f) }
}

func lockAt(target func(e scenarioEnv) string) func(t *testing.T, e scenarioEnv) {
	return func(t *testing.T, e scenarioEnv) {
		os.Remove(e.path(dirlock.Name))
		if err := os.Symlink(target(e), e.path(dirlock.Name)); err != nil {
			t.Fatal(err)
		}
	}
}

// damageScenarios are the silent paths of issue 36 and their neighbours.
var damageScenarios = []damageScenario{
	// seal launders nothing: after rm manifest.json, a foreign or edited
	// file is refused by seal naming it, and nothing is sealed.
	{name: "seal: config.yaml of another seed", finished: true, damage: then(rmManifest, other(rundir.ConfigFile)), seal: rundir.ConfigFile, want: rundir.ManifestFile},
	{name: "seal: config.yaml with another alpha", finished: true, damage: then(rmManifest, func(t *testing.T, e scenarioEnv) {
		raw, _ := os.ReadFile(e.path(rundir.ConfigFile))
		edited := regexp.MustCompile(`(?m)^(\s+alpha: )\S+$`).ReplaceAllString(string(raw), "${1}0.02")
		if edited == string(raw) {
			t.Fatal("config.yaml has no inner.alpha line")
		}
		os.WriteFile(e.path(rundir.ConfigFile), []byte(edited), 0o644)
	}), seal: rundir.ConfigFile, want: rundir.ManifestFile},
	{name: "seal: another seed's checkpoint", finished: false, damage: then(rmManifest, other(rundir.CheckpointFile)), seal: rundir.CheckpointFile, want: rundir.ManifestFile},
	{name: "seal: checkpoint without sha256, weights edited", finished: false, damage: then(rmManifest, func(t *testing.T, e scenarioEnv) {
		raw, _ := os.ReadFile(e.path(rundir.CheckpointFile))
		var m map[string]any
		json.Unmarshal(raw, &m)
		delete(m, "sha256")
		m["state"].(map[string]any)["W"].([]any)[0] = 0.5
		b, _ := json.Marshal(m)
		os.WriteFile(e.path(rundir.CheckpointFile), b, 0o644)
	}), seal: rundir.CheckpointFile, want: rundir.ManifestFile},
	{name: "seal: metrics rows deleted", finished: true, damage: then(rmManifest, func(t *testing.T, e scenarioEnv) {
		raw, _ := os.ReadFile(e.path(rundir.MetricsFile))
		lines := strings.SplitAfter(string(raw), "\n")
		os.WriteFile(e.path(rundir.MetricsFile), []byte(lines[0]+strings.Join(lines[2:], "")), 0o644)
	}), seal: rundir.MetricsFile, want: rundir.ManifestFile},
	{name: "seal: another seed's metrics.csv", finished: true, damage: then(rmManifest, other(rundir.MetricsFile)), seal: rundir.MetricsFile, want: rundir.ManifestFile},
	{name: "seal: another seed's p.csv", finished: false, damage: then(rmManifest, other(rundir.PFile)), seal: rundir.PFile, want: rundir.ManifestFile},
	{name: "seal: edited model.json", finished: true, damage: then(rmManifest, edit(rundir.ModelFile)), seal: rundir.ModelFile, want: rundir.ManifestFile},
	{name: "seal: another seed's model.json", finished: true, damage: then(rmManifest, other(rundir.ModelFile)), seal: rundir.ModelFile, want: rundir.ManifestFile},
	{name: "seal: another seed's result.json", finished: true, damage: then(rmManifest, other(rundir.ResultFile)), seal: rundir.ResultFile, want: rundir.ManifestFile},
	// seal repairs what it can prove: a lost manifest of bound files.
	{name: "reseal of a finished run", finished: true, damage: rmManifest, seal: "ok", want: "harmless"},
	{name: "reseal of an unfinished run", finished: false, damage: rmManifest, seal: "ok", want: "harmless"},

	// A manifest entry deleted is still a file checked.
	{name: "metrics.csv entry deleted, rows edited", finished: true, damage: then(manifest(dropEntry(rundir.MetricsFile)), edit(rundir.MetricsFile)), want: rundir.MetricsFile},
	{name: "metrics.csv entry deleted, another seed's rows", finished: false, damage: then(manifest(dropEntry(rundir.MetricsFile)), other(rundir.MetricsFile)), want: rundir.MetricsFile, accept: []string{"report"}},
	{name: "p.csv entry deleted, another seed's rows", finished: true, damage: then(manifest(dropEntry(rundir.PFile)), other(rundir.PFile)), want: rundir.PFile},
	{name: "tasks.csv entry deleted, another seed's rows", finished: true, damage: then(manifest(dropEntry(rundir.TasksFile)), other(rundir.TasksFile)), want: rundir.TasksFile},
	{name: "seal: another seed's tasks.csv", finished: false, damage: then(rmManifest, other(rundir.TasksFile)), seal: rundir.TasksFile, want: rundir.ManifestFile},
	{name: "manifest: tasks.csv entry's hash", finished: true, damage: manifest(flipEntry(rundir.TasksFile)), want: rundir.ManifestFile},
	{name: "model.json entry deleted, weights edited", finished: true, damage: then(manifest(dropEntry(rundir.ModelFile)), edit(rundir.ModelFile)), want: rundir.ManifestFile},
	{name: "model.json entry deleted, another seed's model", finished: true, damage: then(manifest(dropEntry(rundir.ModelFile)), other(rundir.ModelFile)), want: rundir.ManifestFile},
	{name: "metrics.csv entry deleted", finished: true, damage: manifest(dropEntry(rundir.MetricsFile)), want: rundir.ManifestFile},
	{name: "checkpoint entry deleted", finished: false, damage: manifest(dropEntry(rundir.CheckpointFile)), want: rundir.ManifestFile, accept: []string{"report"}},

	// Damage to manifest.json alone is blamed on it.
	{name: "manifest: result.json entry's hash", finished: true, damage: manifest(flipEntry(rundir.ResultFile)), want: rundir.ManifestFile},
	{name: "manifest: model.json entry's hash", finished: true, damage: manifest(flipEntry(rundir.ModelFile)), want: rundir.ManifestFile},
	{name: "manifest: checkpoint entry's hash", finished: true, damage: manifest(flipEntry(rundir.CheckpointFile)), want: rundir.ManifestFile},
	{name: "manifest: checkpoint entry's hash, unfinished", finished: false, damage: manifest(flipEntry(rundir.CheckpointFile)), want: rundir.ManifestFile, accept: []string{"report"}},
	{name: "manifest: metrics.csv entry's hash", finished: true, damage: manifest(flipEntry(rundir.MetricsFile)), want: rundir.ManifestFile},
	{name: "manifest: p.csv entry's hash, unfinished", finished: false, damage: manifest(flipEntry(rundir.PFile)), want: rundir.ManifestFile, accept: []string{"report"}},
	{name: "manifest: config entry's hash", finished: true, damage: manifest(flipEntry(rundir.ConfigFile)), want: rundir.ManifestFile},
	{name: "manifest: lost its result.json and model.json entries", finished: true, damage: manifest(func(m map[string]any) {
		dropEntry(rundir.ResultFile)(m)
		dropEntry(rundir.ModelFile)(m)
	}), want: rundir.ManifestFile, accept: []string{"resume"}},
	{name: "manifest: lost its result.json entry", finished: true, damage: manifest(dropEntry(rundir.ResultFile)), want: rundir.ManifestFile},
	{name: "manifest: lists result.json of an unfinished run", finished: false, damage: manifest(func(m map[string]any) {
		m["files"] = append(m["files"].([]any), map[string]any{"name": rundir.ResultFile, "bytes": 10, "sha256": strings.Repeat("0", 64)}, map[string]any{"name": rundir.ModelFile, "bytes": 10, "sha256": strings.Repeat("0", 64)})
	}), want: rundir.ManifestFile},

	// A refused call leaves even an interrupted write's temporary file.
	{name: "a stray temporary file, rows edited", finished: true, damage: then(edit(rundir.MetricsFile), func(t *testing.T, e scenarioEnv) {
		os.WriteFile(e.path(".checkpoint.json.tmp123"), []byte(`{"state":`), 0o644)
	}), want: rundir.MetricsFile},

	// The lock cannot be turned into a write elsewhere.
	{name: ".lock symlink to a file outside", finished: true, damage: lockAt(func(e scenarioEnv) string { return e.victim }), want: dirlock.Name, accept: []string{"status", "report"}},
	{name: ".lock symlink to config.yaml", finished: false, damage: lockAt(func(scenarioEnv) string { return rundir.ConfigFile }), want: dirlock.Name, accept: []string{"status", "report"}},
	{name: ".lock dangling symlink", finished: false, damage: lockAt(func(e scenarioEnv) string { return e.victim + ".absent" }), want: dirlock.Name, accept: []string{"status", "report"}},
	{name: ".lock is a directory", finished: true, damage: func(t *testing.T, e scenarioEnv) {
		os.Remove(e.path(dirlock.Name))
		os.Mkdir(e.path(dirlock.Name), 0o755)
	}, want: dirlock.Name, accept: []string{"status", "report"}},
	{name: ".lock holds config.yaml's content", finished: true, damage: func(t *testing.T, e scenarioEnv) {
		raw, _ := os.ReadFile(e.path(rundir.ConfigFile))
		os.WriteFile(e.path(dirlock.Name), raw, 0o644)
	}, want: dirlock.Name, accept: []string{"status", "report"}},
}

// TestDamageScenarios runs each scenario of damageScenarios on a copy of a
// finished or unfinished tiny run: status (rundir.Verify), report, eval and
// resume must each be refused naming the scenario's file, or accept with
// the undamaged output where the scenario says so; a refused call must
// leave every byte of the directory (and of the file outside it a .lock
// link points to) as it was. A scenario without an expected outcome fails.
func TestDamageScenarios(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains four tiny runs")
	}
	root := t.TempDir()
	c := tinyConfig()
	c.Meta.Iterations = 20
	runs := map[string]string{}
	for _, seed := range []uint64{1, 2} {
		c.Seed = seed
		fin := filepath.Join(root, fmt.Sprintf("finished-%d", seed))
		if _, err := Train(context.Background(), c, fin, Options{}); err != nil {
			t.Fatal(err)
		}
		unf := filepath.Join(root, fmt.Sprintf("unfinished-%d", seed))
		if _, err := Train(ctxtest.StopAfter(context.Background(), 15), c, unf, Options{}); err == nil {
			t.Fatal("the interrupted run finished")
		}
		runs[fmt.Sprintf("true-%d", seed)], runs[fmt.Sprintf("false-%d", seed)] = fin, unf
	}
	work := t.TempDir()
	want := map[bool][]string{}
	for _, fin := range []bool{true, false} {
		want[fin] = scenarioOutcomes(t, work, runs[fmt.Sprint(fin)+"-1"], scenarioEnv{}, nil, "", "")
	}
	refused := 0
	for _, sc := range damageScenarios {
		if sc.want == "" || sc.damage == nil {
			t.Errorf("%s: no expected outcome (want a file to blame, or \"harmless\")", sc.name)
			continue
		}
		env := scenarioEnv{other: runs[fmt.Sprint(sc.finished)+"-2"], victim: filepath.Join(work, "victim")}
		got := scenarioOutcomes(t, work, runs[fmt.Sprint(sc.finished)+"-1"], env, sc.damage, sc.seal, sc.want)
		for i, cmd := range damageCommands {
			// report skips an unfinished run, damaged or not (results.Discover),
			// unless the manifest claims it finished.
			skips := !sc.finished && cmd.name == "report"
			accepted := sc.want == "harmless" || contains(sc.accept, cmd.name) || skips
			switch g := got[i]; {
			case strings.HasPrefix(g, "changed: "):
				t.Errorf("%s, %s: a refused call changed the directory: %s", sc.name, cmd.name, g)
			case accepted && g == want[sc.finished][i]:
			case (!accepted || skips) && strings.HasPrefix(g, "refused: ") && (strings.Contains(g, "DIR/"+sc.want+":") || strings.Contains(g, "DIR has no "+sc.want)):
				refused++
			default:
				t.Errorf("%s, %s: %.300s\nwant %s", sc.name, cmd.name, g, map[bool]string{true: "the undamaged output", false: "a refusal naming DIR/" + sc.want}[accepted])
			}
		}
		if sc.seal != "" && got[len(got)-1] != "seal ok" {
			t.Errorf("%s: %s", sc.name, got[len(got)-1])
		}
	}
	t.Logf("%d scenarios: %d calls refused naming the file, each leaving every byte as it was", len(damageScenarios), refused)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scenarioOutcomes copies src into work, applies damage, runs seal if
// sealWant is set (checking its outcome), then each of damageCommands,
// snapshotting the directory and the victim before each call: a refused
// call that changed them is reported as "changed: ". The last element is
// seal's outcome, "seal ok" when as expected.
func scenarioOutcomes(t *testing.T, work, src string, env scenarioEnv, damage func(*testing.T, scenarioEnv), sealWant, want string) []string {
	t.Helper()
	dir := filepath.Join(work, "run")
	defer os.RemoveAll(dir)
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o644)
	}
	env.dir = dir
	if env.victim != "" {
		os.WriteFile(env.victim, []byte("precious\n"), 0o644)
	}
	if damage != nil {
		damage(t, env)
	}
	sealOut := "seal ok"
	if sealWant != "" {
		before := dirSnapshot(t, dir, env.victim)
		err := rundir.SealExisting(dir)
		switch {
		case sealWant == "ok" && err != nil:
			sealOut = "seal refused a provable directory: " + err.Error()
		case sealWant != "ok" && (err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, sealWant)+": ")):
			sealOut = fmt.Sprintf("seal: %v, want a refusal naming %s", err, sealWant)
		case sealWant != "ok" && dirSnapshot(t, dir, env.victim) != before:
			sealOut = "a refused seal changed the directory"
		}
	}
	var got []string
	for _, cmd := range damageCommands {
		before := dirSnapshot(t, dir, env.victim)
		out, err := cmd.run(dir)
		switch {
		case err != nil && dirSnapshot(t, dir, env.victim) != before:
			got = append(got, "changed: "+strings.ReplaceAll(err.Error(), dir, "DIR"))
		case err != nil:
			got = append(got, "refused: "+strings.ReplaceAll(err.Error(), dir, "DIR"))
		default:
			got = append(got, pointers.ReplaceAllString(fmt.Sprintf("%#v", out), "0x"))
		}
	}
	return append(got, sealOut)
}

// pointers are the addresses %#v prints, which differ between loads.
var pointers = regexp.MustCompile(`0x[0-9a-f]{6,}`)

// dirSnapshot describes every entry of dir (name, type, link target,
// content) and the content of the file extra.
func dirSnapshot(t *testing.T, dir, extra string) string {
	t.Helper()
	var b strings.Builder
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fmt.Fprintf(&b, "%s %v", e.Name(), e.Type())
		if e.Type()&os.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			b.WriteString(" -> " + l)
		} else if e.Type().IsRegular() {
			raw, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", raw)
		}
		b.WriteString("\n")
	}
	if extra != "" {
		raw, _ := os.ReadFile(extra)
		fmt.Fprintf(&b, "%s %q\n", extra, raw)
	}
	return b.String()
}
