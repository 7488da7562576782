package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/run"
	"gopkg.in/yaml.v3"
)

// TestKubernetesIndexedJob checks the example of the -cell contract under
// Kubernetes (scripts/kubernetes/quick-indexed-job.yaml): an Indexed Job
// with one completion per cell of its grid, a pod failure policy that
// ignores the interrupted status 75 and disruptions, and a container
// command that, run by sh with JOB_COMPLETION_INDEX set as the Job
// controller sets it (the image's paths mapped to temporary ones, the grid
// cut to 300 iterations), trains exactly that cell.
func TestKubernetesIndexedJob(t *testing.T) {
	raw, err := os.ReadFile("../scripts/kubernetes/quick-indexed-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Kind string
		Spec struct {
			CompletionMode   string `yaml:"completionMode"`
			Completions      int
			PodFailurePolicy struct {
				Rules []struct {
					Action      string
					OnExitCodes *struct {
						Operator string
						Values   []int
					} `yaml:"onExitCodes"`
				}
			} `yaml:"podFailurePolicy"`
			Template struct {
				Spec struct {
					RestartPolicy string `yaml:"restartPolicy"`
					Grace         int    `yaml:"terminationGracePeriodSeconds"`
					Containers    []struct {
						Command, Args []string
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	_, cfgs, err := experiment.Load("../configs/experiments/quick.yaml", run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	if job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions != len(cfgs) {
		t.Errorf("kind %s, completion mode %s, %d completions: want an Indexed Job with one completion per cell (%d)", job.Kind, s.CompletionMode, s.Completions, len(cfgs))
	}
	ignores75 := false
	for _, r := range s.PodFailurePolicy.Rules {
		ignores75 = ignores75 || (r.Action == "Ignore" && r.OnExitCodes != nil && r.OnExitCodes.Operator == "In" && slices.Contains(r.OnExitCodes.Values, exitInterrupted))
	}
	if !ignores75 || s.Template.Spec.RestartPolicy != "Never" || s.Template.Spec.Grace < 60 {
		t.Errorf("want a pod failure policy ignoring exit %d, restartPolicy Never and a grace period for the checkpoint", exitInterrupted)
	}
	c := s.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || len(c.Args) != 1 {
		t.Fatalf("container command %v %v: want /bin/sh -c SCRIPT", c.Command, c.Args)
	}
	if testing.Short() {
		t.Skip("trains one cell of the quick grid")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	wrapper := "#!/bin/sh\nTRMAML_TEST_MAIN=1 exec " + os.Args[0] + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "trmaml"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	quick, err := os.ReadFile("../configs/experiments/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	short := strings.NewReplacer("iterations: 6000", "iterations: 300", "base: ../sine_quick.yaml", "base: sine_quick").Replace(string(quick))
	spec := filepath.Join(dir, "quick.yaml")
	if err := os.WriteFile(spec, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, cfgs, err = experiment.Load(spec, run.Options{}); err != nil {
		t.Fatal(err)
	}
	script := strings.NewReplacer("/trmaml/configs/experiments/quick.yaml", spec, "/runs", dir).Replace(c.Args[0])
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "JOB_COMPLETION_INDEX=5")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	grid := experiment.Jobs(cfgs, filepath.Join(dir, "quick"))
	cells, err := experiment.Cells(grid)
	if err != nil {
		t.Fatal(err)
	}
	for i, cell := range cells {
		if want := map[bool]experiment.State{true: experiment.Finished, false: experiment.NotStarted}[i == 5]; cell.State != want {
			t.Errorf("cell %d: %s, want %s", i, cell.State, want)
		}
	}
}
