package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/ctxtest"
	"github.com/trmaml/trmaml/rundir"
)

// TestValidationFilesSealed: validation.csv and model_best_val.json are
// sealed in the manifest and bound to the checkpoint, so that a damaged,
// cut, deleted or swapped one (another seed's run) is refused by Verify
// and by eval naming the file, in a finished and in an unfinished run,
// even under a manifest recomputed over it; the rows and best model a
// kill between an evaluation and its checkpoint leaves are accepted.
func TestValidationFilesSealed(t *testing.T) {
	t.Parallel()
	opts := fixtureOptions(t)
	root := t.TempDir()
	train := func(name string, seed uint64, iterations int) string {
		c := tinyOmniglot(t)
		c.Seed, c.Meta.Iterations, c.Meta.Output, c.Eval.Every, c.Eval.Select = seed, iterations, "best_val", 1, "mean"
		dir := filepath.Join(root, name)
		if _, err := Train(context.Background(), c, dir, opts); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	finished, other := train("finished", 1, 3), train("other", 2, 3)
	// Stopped after the checkpoint of its evaluation at iteration 2, with
	// rows of a later evaluation appended (a kill before its checkpoint).
	c := tinyOmniglot(t)
	c.Meta.Iterations, c.Meta.Output, c.Eval.Every, c.Eval.Select = 6, "best_val", 2, "mean"
	unfinished := filepath.Join(root, "unfinished")
	if _, err := Train(ctxtest.StopAfter(context.Background(), 3), c, unfinished, opts); err == nil {
		t.Fatal("the interrupted run finished")
	}
	val := filepath.Join(unfinished, rundir.ValidationFile)
	rows, err := os.ReadFile(val)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(val, append(rows, "4,0.5,0.5,NaN\n"...), 0o644)
	if s, err := rundir.Verify(unfinished); err != nil || s.Finished {
		t.Fatalf("the unfinished run with a later row: %v", err)
	}
	os.WriteFile(val, rows, 0o644)
	m, err := os.ReadFile(filepath.Join(finished, rundir.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{rundir.ValidationFile, rundir.BestValModelFile} {
		if !bytes.Contains(m, []byte(`"name": "`+name+`"`)) {
			t.Errorf("the manifest does not seal %s", name)
		}
	}
	for _, name := range []string{rundir.ValidationFile, rundir.BestValModelFile} {
		for _, src := range []string{finished, unfinished} {
			raw, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			swapped, _ := os.ReadFile(filepath.Join(other, name))
			for _, d := range []struct {
				what string
				body []byte
			}{
				{"flipped bit", flip(raw, len(raw)/2)},
				{"cut", raw[:len(raw)/2]},
				{"another seed's", swapped},
				{"deleted", nil},
			} {
				for _, reseal := range []bool{false, true} {
					dir := filepath.Join(t.TempDir(), "run")
					if err := copyDir(src, dir); err != nil {
						t.Fatal(err)
					}
					path := filepath.Join(dir, name)
					if d.body == nil {
						os.Remove(path)
					} else {
						os.WriteFile(path, d.body, 0o644)
					}
					if reseal {
						if err := rundir.Seal(dir, src == finished); err != nil {
							t.Fatal(err)
						}
					}
					_, err := rundir.Verify(dir)
					if err == nil || !strings.Contains(err.Error(), path+":") {
						t.Errorf("%s: %s %s (manifest recomputed: %v): Verify %v, want it refused naming the file", filepath.Base(src), d.what, name, reseal, err)
					}
					if _, err := Evaluate(context.Background(), dir, 0, opts); err == nil || !strings.Contains(err.Error(), name) {
						t.Errorf("%s: %s %s: eval %v, want it refused naming the file", filepath.Base(src), d.what, name, err)
					}
				}
			}
		}
	}
}

// copyDir copies every file of the directory src into a new dst.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}
