package slurm

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/configs"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test ./slurm -update rewrites it):\n%s", name, path, got)
	}
}

var testJob = Job{
	Name: "quick", Trmaml: "/opt/trmaml/bin/trmaml", Config: "/home/me/exp/quick.yaml",
	Out: "/scratch/me/runs/quick", ExtraArgs: []string{"-data", "/scratch/me/data"},
	Options: []Option{{"account", "lab"}, {"exclusive", ""}, {"partition", "cpu"}},
}

// TestScriptsGolden pins both scripts: the array over cells 0-2, 5 and
// 7-8 with at most 3 running, the signal, requeue and trap lines, quoted
// paths, passed-through options, and the report's dependency.
func TestScriptsGolden(t *testing.T) {
	r := Resources{CPUs: 2, MemMiB: 2048, Time: 26*time.Hour + 5*time.Minute}
	golden(t, "array.sbatch", ArrayScript(testJob, []int{0, 1, 2, 5, 7, 8}, 3, r, "/scratch/me/runs/quick/slurm/logs"))
	golden(t, "report.sbatch", ReportScript(testJob, "4242", ReportResources, "/scratch/me/runs/quick/slurm/logs"))
}

func TestRangeAndFormatTime(t *testing.T) {
	for _, c := range []struct {
		cells []int
		want  string
	}{{[]int{0}, "0"}, {[]int{0, 1, 2, 3}, "0-3"}, {[]int{1, 3, 4, 9}, "1,3-4,9"}, {[]int{2, 4, 6}, "2,4,6"}} {
		if got := Range(c.cells); got != c.want {
			t.Errorf("Range(%v) = %q, want %q", c.cells, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{90 * time.Second, "0-00:01:30"}, {26*time.Hour + 5*time.Minute, "1-02:05:00"}, {49*time.Hour + 59*time.Minute + 59*time.Second, "2-01:59:59"}} {
		if got := FormatTime(c.d); got != c.want {
			t.Errorf("FormatTime(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if err := CheckPath("-out", "/scratch/me/runs/quick dir"); err == nil || !strings.Contains(err.Error(), "spaces") {
		t.Errorf("CheckPath accepted a space: %v", err)
	}
	if err := CheckPath("-out", "/scratch/me/runs/quick-1.5"); err != nil {
		t.Error(err)
	}
}

// TestEstimate checks the resource arithmetic against hand computations
// from the configs' memory estimates and the documented constants.
func TestEstimate(t *testing.T) {
	omni, err := configs.Builtin("omniglot_5way_1shot_maml") // meta-batch 8
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flops   float64
		cpus    int
		fast    bool
		perIter float64
	}{
		{3.01e10, 1, true, 0.37625},      // the paper's 5-way 1-shot on one CPU of the fast build
		{3.01e10, 2, true, 0.188125},     // two CPUs share the meta-batch
		{3.01e10, 16, true, 0.37625 / 8}, // no more CPUs than instances in the meta-batch
		{3.01e10, 2, false, 1.12875},     // the default build: 6 times longer
		{4.98e6, 1, true, 0.002},         // the sine MLP: the floor
	} {
		if got := SecondsPerIteration(omni, c.flops, c.cpus, c.fast); math.Abs(got-c.perIter) > 1e-9 {
			t.Errorf("SecondsPerIteration(%g FLOPs, %d CPUs, fast %v) = %g, want %g", c.flops, c.cpus, c.fast, got, c.perIter)
		}
	}
	// DR-MAML at alpha 0.5 adapts 15 candidates for a tail of 8: its
	// instances are those, in the CPUs that share them and in the cost of
	// one.
	dr, err := configs.Override(omni, "-set", []string{"algorithm=drmaml", "drmaml.alpha=0.5"}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := SecondsPerIteration(dr, 3.01e10, 16, true), 0.37625/15; math.Abs(got-want) > 1e-9 {
		t.Errorf("DR-MAML on 16 CPUs: %g s, want %g (15 candidates share them)", got, want)
	}
	for _, name := range []string{"sine_quick", "omniglot_5way_1shot_maml", "omniglot_20way_5shot_maml", "drmaml"} {
		c, err := configs.Builtin(name)
		if name == "drmaml" {
			c, err = dr, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		drawn, err := c.DrawnBatch()
		if err != nil {
			t.Fatal(err)
		}
		m := c.Memory()
		const perIter = 0.7
		r := Estimate(c, 0, perIter, false)
		wantMem := max(512, int(math.Ceil(m.Total()*1.5/(1<<20)/64))*64)
		if r.MemMiB != wantMem {
			t.Errorf("%s: --mem %d MiB, want %d (estimate %.0f MiB x 1.5, in 64 MiB steps, at least 512)", name, r.MemMiB, wantMem, m.Total()/(1<<20))
		}
		evals := float64(c.Meta.Iterations/c.Eval.Every + 1)
		final := float64(c.Eval.Instances + c.Eval.TrainInstances)
		if c.Eval.FinalInstances > 0 {
			final = 2 * float64(c.Eval.FinalInstances)
		}
		secs := perIter*float64(c.Meta.Iterations) + perIter/float64(drawn)/2*(evals*float64(c.Eval.Instances+c.Eval.TrainInstances)+final)
		want := time.Duration(secs*1.5*1e9) + 10*time.Minute
		if r.Time <= want || r.Time > want+time.Minute || r.Time%time.Minute != 0 {
			t.Errorf("%s: --time %v, want %v rounded up to a minute", name, r.Time, want)
		}
		// A measured time per iteration includes the evaluations.
		if got, want := Estimate(c, 0, 0.5, true).Time, (time.Duration(0.5*float64(c.Meta.Iterations)*1.5*1e9)+10*time.Minute).Truncate(time.Minute)+time.Minute; got != want {
			t.Errorf("%s: measured 0.5 s/iteration gives --time %v, want %v", name, got, want)
		}
		if want := map[string]int{"sine": 1, "omni": 2, "drma": 2}[name[:4]]; r.CPUs != want {
			t.Errorf("%s: %d CPUs, want %d", name, r.CPUs, want)
		}
	}
}

// TestModelRate: a model that states its rate (configs.Rated) is estimated
// at it: conv4 at 80 GFLOP per CPU-second on Omniglot's 28x28 images, 40
// on mini-ImageNet's 84x84, where the uncounted batch-norm and pooling
// passes weigh more; the MLP, which states none, at FLOPsPerCPUSecond.
func TestModelRate(t *testing.T) {
	for _, c := range []struct {
		config string
		rate   float64
	}{
		{"omniglot_5way_1shot_maml", 80e9},
		{"miniimagenet_5way_1shot_maml", 40e9},
		{"sine_quick", FLOPsPerCPUSecond},
	} {
		cfg, err := configs.Builtin(c.config)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Meta.Batch = 1
		const flops = 1e12
		if got, want := SecondsPerIteration(cfg, flops, 1, true), flops/c.rate; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %g s per iteration for %g FLOPs, want %g (%g FLOPs per CPU-second)", c.config, got, flops, want, c.rate)
		}
	}
}

// TestOptionRefusals: only sbatch long options pass, not those the scripts
// set, nor values that would break the script.
func TestOptionRefusals(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"partition", "gpu", ""},
		{"exclusive", "", ""},
		{"gres", "gpu:1", ""},
		{"partiton", "gpu", `"partiton" is not an sbatch long option`},
		{"--partition", "gpu", "not an sbatch long option"},
		{"p", "gpu", "not an sbatch long option"},
		{"time", "1:00:00", "--time is set by trmaml: use -time"},
		{"mem", "4G", "use -mem"},
		{"array", "0-3", "set by trmaml"},
		{"output", "x.log", "set by trmaml"},
		{"wrap", "ls", "set by trmaml"},
		{"help", "", "not for a batch script"},
		{"comment", "a\n#SBATCH --mem=1", "must be one line"},
		{"qos", "-high", "not starting with -"},
		// sbatch splits an #SBATCH line at blanks and drops quotes: the
		// job would get "a" (and a stray "b"), not the value given.
		{"partition", "a b", "a blank or a quote"},
		{"comment", "a\tb", "a blank or a quote"},
		{"comment", `"x"`, "a blank or a quote"},
	} {
		err := CheckOption(c.name, c.value)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckOption(%q, %q) = %v, want %q", c.name, c.value, err, c.want)
		}
	}
	opts, err := Merge(map[string]string{"partition": "cpu", "account": "lab"}, map[string]string{"partition": "gpu"})
	if err != nil || len(opts) != 2 || opts[0] != (Option{"account", "lab"}) || opts[1] != (Option{"partition", "gpu"}) {
		t.Errorf("Merge: %v, %v: want account=lab, partition=gpu (the flag wins)", opts, err)
	}
	if _, err := Merge(map[string]string{"colour": "red"}, nil); err == nil {
		t.Error("Merge accepted colour")
	}
}

func TestOptionsYAML(t *testing.T) {
	var o Options
	if err := yaml.Unmarshal([]byte("partition: gpu\nnodes: 1\nexclusive:\n"), &o); err != nil || o["partition"] != "gpu" || o["nodes"] != "1" || o["exclusive"] != "" || len(o) != 3 {
		t.Errorf("got %v, %v", o, err)
	}
	for _, bad := range []string{"[a, b]", "partition: [a]", "partition: a\npartition: b\n"} {
		var o Options
		if err := yaml.Unmarshal([]byte(bad), &o); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestSubmitErrors: without sbatch on PATH Submit says so; a refusing
// sbatch's own message is shown verbatim.
func TestSubmitErrors(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Submit("x.sbatch"); err != ErrNoSbatch {
		t.Errorf("no sbatch: %v", err)
	}
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/sh\necho 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n"), 0o755)
	t.Setenv("PATH", bin)
	if _, err := Submit("x.sbatch"); err == nil || !strings.HasSuffix(err.Error(), "refused the job: sbatch: error: invalid partition specified: nope") {
		t.Errorf("refusal: %v", err)
	}
	os.WriteFile(filepath.Join(bin, "sbatch"), []byte("#!/bin/sh\necho '4242;cluster'\n"), 0o755)
	if id, err := Submit("x.sbatch"); id != "4242" || err != nil {
		t.Errorf("id %q, %v", id, err)
	}
}
