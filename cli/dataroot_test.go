package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataRootOfFamiliesWithoutData: a data root that a config file, a
// -set or an experiment's base or sweep states for the sinusoid family,
// which reads no data files, is refused naming where it was stated, and
// writes nothing; the -data flag, a machine-wide default, still runs a
// sinusoid train and grid.
func TestDataRootOfFamiliesWithoutData(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	tiny := "model: {kind: mlp, mlp: {hidden: [8]}}\nmeta: {iterations: 4, batch: 2}\n" +
		"eval: {every: 2, instances: 490, train_instances: 100, batch: 245, query: 5, final_instances: 490}\n"
	grid := "name: g\nbase: %s\nalgorithms: [maml]\norders: [first]\nseeds: [1]\n"
	files := map[string]string{
		"tiny.yaml":   "name: tiny\n" + tiny,
		"rooted.yaml": "name: rooted\n" + tiny + "data:\n  root: /x\n",
		"exp.yaml":    strings.Replace(grid, "%s", "tiny.yaml", 1),
		"base.yaml":   strings.Replace(grid, "%s", "rooted.yaml", 1),
		"sweep.yaml":  strings.Replace(grid, "%s", "tiny.yaml", 1) + "sweep:\n  data.root: [/x]\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(tmp, name) }
	const reads = "task family sinusoid reads no data files: only the families omniglot, imagefolder read a data section"
	for _, tc := range []struct {
		name string
		args []string
		want string // substring of the error, "" for a run that succeeds
	}{
		{"file", []string{"train", "-config", in("rooted.yaml")}, in("rooted.yaml") + `:6: data.root = "/x": ` + reads},
		{"-set", []string{"train", "-config", in("tiny.yaml"), "-set", "data.root=/x"}, `-set data.root=/x: data.root = "/x": ` + reads},
		{"experiment base", []string{"experiment", "-config", in("base.yaml")}, in("rooted.yaml") + `:6: data.root = "/x": ` + reads},
		{"experiment sweep", []string{"experiment", "-config", in("sweep.yaml")}, `data.root = "/x": ` + reads},
		{"train -data", []string{"train", "-config", in("tiny.yaml"), "-data", tmp}, ""},
		{"experiment -data", []string{"experiment", "-config", in("exp.yaml"), "-data", tmp}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(tmp, strings.ReplaceAll(tc.name, " ", "_"))
			var stdout, stderr bytes.Buffer
			err := dispatch(append(tc.args, "-out", out), &stdout, &stderr)
			_, statErr := os.Stat(out)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v\n%s", err, stderr.String())
			case tc.want != "" && err == nil:
				t.Fatal("accepted")
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error\n%v\nwant it to contain\n%s", err, tc.want)
			case tc.want != "" && !os.IsNotExist(statErr):
				t.Errorf("a refused call wrote %s", out)
			case tc.want == "" && statErr != nil:
				t.Error(statErr)
			}
		})
	}
}
