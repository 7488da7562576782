package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/results"
	"github.com/trmaml/trmaml/rundir"
)

// damage is one way of damaging a file: it returns the damaged content, or
// nil if it does not apply. other is the same file of another run (another
// seed), or nil.
type damage struct {
	name string
	do   func(raw, other []byte) []byte
}

// damages returns the damages of a file with content raw: bit flips, a cut
// at every line boundary and in the middle, an edited value, NaN for the
// first number, the file of another seed's run, deletion (nil content, see
// TestDamageSuite).
func damages(name string, raw []byte) []damage {
	d := []damage{
		{"flip first bit", func(r, _ []byte) []byte { return flip(r, 0) }},
		{"flip middle bit", func(r, _ []byte) []byte { return flip(r, len(r)/2) }},
		{"flip last byte", func(r, _ []byte) []byte { return flip(r, len(r)-1) }},
		{"cut in the middle", func(r, _ []byte) []byte { return r[:len(r)/2] }},
		{"edited digit", func(r, _ []byte) []byte {
			i := bytes.IndexAny(r[len(r)/3:], "123456789")
			if i < 0 {
				return nil
			}
			e := bytes.Clone(r)
			e[len(r)/3+i] = '0'
			return e
		}},
		{"NaN", func(r, _ []byte) []byte {
			i := bytes.IndexAny(r, "0123456789")
			if i < 0 {
				return nil
			}
			j := i
			for j < len(r) && bytes.IndexByte([]byte("0123456789.e-+"), r[j]) >= 0 {
				j++
			}
			return append(append(append([]byte{}, r[:i]...), "NaN"...), r[j:]...)
		}},
		{"another seed's file", func(_, o []byte) []byte { return o }},
		{"deleted", nil},
	}
	if name == rundir.ConfigFile || name == rundir.MetricsFile || name == rundir.PFile || name == rundir.TasksFile {
		// An edited value on every line: each config field (seed,
		// inner.alpha, p_lr, eval.query, meta.iterations, ...), each row.
		for k, start := 0, 0; k < len(raw); k++ {
			if raw[k] != '\n' {
				continue
			}
			if i := bytes.IndexAny(raw[start:k], "0123456789"); i >= 0 {
				at := start + i
				d = append(d, damage{fmt.Sprintf("edited line at byte %d", at), func(r, _ []byte) []byte {
					e := bytes.Clone(r)
					e[at] = "1234567890"[e[at]-'0']
					return e
				}})
			}
			start = k + 1
		}
	}
	for k, n := 0, 0; k < len(raw); k++ {
		if raw[k] == '\n' && k+1 < len(raw) {
			n++
			cut := k + 1
			d = append(d, damage{fmt.Sprintf("cut after line %d", n), func(r, _ []byte) []byte { return r[:cut] }})
		}
	}
	return d
}

func flip(r []byte, i int) []byte {
	if len(r) == 0 {
		return nil
	}
	e := bytes.Clone(r)
	e[i] ^= 1 << 3
	return e
}

// command is a command that reads a run directory, reduced to what it
// outputs: a result without timing, or an error.
type command struct {
	name string
	run  func(dir string) (any, error)
}

var damageCommands = []command{
	// status verifies an idle run directory with rundir.Verify
	// (experiment.Cells), as every other command does first.
	{"status", func(dir string) (any, error) {
		s, err := rundir.Verify(dir)
		if err != nil {
			return nil, err
		}
		return s.Finished, nil
	}},
	// report, plot and tradeoff find runs with results.Discover, which
	// skips unfinished ones, and read them through results.Load, as
	// compare does.
	{"report", func(dir string) (any, error) {
		dirs, unfinished, err := results.Discover([]string{dir})
		if err != nil {
			return nil, err
		}
		if len(dirs) == 0 {
			return fmt.Sprintf("skipping unfinished %q", unfinished), nil
		}
		r, err := results.Load(dirs[0])
		if err != nil {
			return nil, err
		}
		res := r.Result
		res.Timing = rundir.Timing{}
		return []any{res, r.Config, r.Iterations, r.P, r.Column(results.TestMean)}, nil
	}},
	{"eval", func(dir string) (any, error) {
		r, err := Evaluate(context.Background(), dir, 0, Options{})
		if err != nil {
			return nil, err
		}
		r.Timing = rundir.Timing{}
		return *r, nil
	}},
	{"resume", func(dir string) (any, error) {
		r, err := Resume(context.Background(), dir, Options{})
		if err != nil {
			return nil, err
		}
		r.Timing = rundir.Timing{}
		return *r, nil
	}},
}

// TestDamageSuite damages each file of a finished and of an unfinished run
// directory in each way (damages), and runs each command that reads a run
// directory on the damaged copy: each must refuse it blaming the damaged
// file ("DIR/FILE: ..."; for a deleted manifest, "DIR has no
// manifest.json"), or give the undamaged directory's output. Among the rows are the cases of issue 19: a
// truncated config.yaml that is still valid YAML, another seed's
// checkpoint, a foreign or deleted row of metrics.csv or p.csv, an edited
// result.json or model.json, a deleted checkpoint hash (a cut), the
// checkpoint of a finished copy of the unfinished run, a finished run's
// deleted result.json (which report must not skip as unfinished).
func TestDamageSuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains four tiny runs and runs some thousand commands")
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
		// Stopped at iteration 15, with a checkpoint of pending batches.
		if _, err := Train(ctxtest.StopAfter(context.Background(), 15), c, unf, Options{}); err == nil {
			t.Fatal("the interrupted run finished")
		}
		runs[fmt.Sprintf("finished-%d", seed)], runs[fmt.Sprintf("unfinished-%d", seed)] = fin, unf
	}
	// A copy of the unfinished run, finished: its last checkpoint names
	// the unfinished run's as its predecessor.
	finishedCopy := filepath.Join(root, "finished-copy")
	if err := copyRunFiles(runs["unfinished-1"], finishedCopy); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(context.Background(), finishedCopy, Options{}); err != nil {
		t.Fatal(err)
	}
	copyCheckpoint, err := os.ReadFile(filepath.Join(finishedCopy, rundir.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	cells, refused, work := 0, 0, t.TempDir()
	for _, kind := range []string{"finished", "unfinished"} {
		src, other := runs[kind+"-1"], runs[kind+"-2"]
		want := outcomes(t, work, src, nil)
		names := append(rundir.StateFiles(), rundir.ManifestFile)
		for _, name := range names {
			raw, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				continue // model.json and result.json of the unfinished run
			}
			otherRaw, _ := os.ReadFile(filepath.Join(other, name))
			ds := damages(name, raw)
			if kind == "unfinished" && name == rundir.CheckpointFile {
				ds = append(ds, damage{"the checkpoint of a finished copy of the run", func(_, _ []byte) []byte { return copyCheckpoint }})
			}
			for _, d := range ds {
				var damaged []byte
				if d.do != nil {
					if damaged = d.do(raw, otherRaw); damaged == nil || bytes.Equal(damaged, raw) {
						continue
					}
				}
				got := outcomes(t, work, src, func(dir string) {
					path := filepath.Join(dir, name)
					if d.do == nil {
						os.Remove(path)
					} else {
						os.WriteFile(path, damaged, 0o644)
					}
				})
				for i, cmd := range damageCommands {
					cells++
					switch got := got[i]; {
					case got == want[i]:
					case strings.HasPrefix(got, "refused: ") && (strings.Contains(got, "DIR/"+name+":") || strings.Contains(got, "DIR has no "+name)):
						refused++
					default:
						t.Errorf("%s run, %s %s, %s: %s\nundamaged: %s", kind, name, d.name, cmd.name, got, want[i])
					}
				}
			}
		}
	}
	t.Logf("%d damaged-directory calls: %d refused naming the file, the rest gave the undamaged output", cells, refused)
}

// outcomes copies the run directory src into work, applies damage to the copy (if
// not nil), runs each of damageCommands on it in turn (resume last: it
// writes when it accepts) and describes each outcome: "refused: " and the
// error, with the copy's path replaced, or the output. A refused call that
// changed a byte of the directory is "changed the directory, ...", which
// the suite does not accept.
func outcomes(t *testing.T, work, src string, damage func(dir string)) []string {
	t.Helper()
	dir := filepath.Join(work, "run")
	defer os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), raw, 0o644)
	}
	if damage != nil {
		damage(dir)
	}
	var got []string
	for _, cmd := range damageCommands {
		before := dirSnapshot(t, dir, "")
		out, err := cmd.run(dir)
		if err != nil && dirSnapshot(t, dir, "") != before {
			got = append(got, "changed the directory, refused: "+strings.ReplaceAll(err.Error(), dir, "DIR"))
		} else if err != nil {
			got = append(got, "refused: "+strings.ReplaceAll(err.Error(), dir, "DIR"))
		} else {
			got = append(got, fmt.Sprintf("%#v", out))
		}
	}
	return got
}
