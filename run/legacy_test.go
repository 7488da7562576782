package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestResumeLegacyCheckpoint resumes run directories stopped at iteration 20
// of 30 by the code before the Method refactoring (testdata/legacy/*/
// unfinished) and checks that they finish exactly as the uninterrupted runs
// of that code did (testdata/legacy/*/want): old checkpoints keep working
// and TR-MAML and MAML are reproduced bit for bit.
func TestResumeLegacyCheckpoint(t *testing.T) {
	for _, name := range []string{"trmaml-last", "trmaml-T2", "maml-T1"} {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join("testdata", "legacy", name)
			dir := filepath.Join(t.TempDir(), "run")
			if out, err := exec.Command("cp", "-r", filepath.Join(src, "unfinished"), dir).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if _, err := Resume(dir, nil); err != nil {
				t.Fatal(err)
			}
			got, want := readResult(t, filepath.Join(dir, ResultFile)), readResult(t, filepath.Join(src, "want", ResultFile))
			got.Timing, want.Timing = Timing{}, Timing{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("resumed result.json differs from the recorded one: meta-test mean %v, want %v", got.MetaTest.Mean, want.MetaTest.Mean)
			}
			for _, f := range []string{ModelFile, PFile} {
				a, _ := os.ReadFile(filepath.Join(dir, f))
				b, _ := os.ReadFile(filepath.Join(src, "want", f))
				if string(a) != string(b) {
					t.Errorf("%s differs from the recorded one", f)
				}
			}
		})
	}
}
