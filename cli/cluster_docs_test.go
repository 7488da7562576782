package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trmaml/trmaml/models/conv4"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/experiment"
	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/run"
	"github.com/trmaml/trmaml/slurm"
)

// TestReadmeClusterSection checks that README.md has the section "Running
// on a cluster" with the three commands of docs/cluster.md (submit,
// status, report), each with the flags the command really takes, and a
// link to cluster.md.
func TestReadmeClusterSection(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "\n## Running on a cluster\n")
	if start < 0 {
		t.Fatal(`README.md has no section "## Running on a cluster"`)
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	cluster := docsPage(t, "cluster.md")
	for _, re := range []string{
		`trmaml experiment -config (\S+) -out (\S+) -slurm`,
		`trmaml status (\S+)`,
		`trmaml experiment -config (\S+) -out (\S+) -report`,
	} {
		m := regexp.MustCompile(re).FindString(section)
		if m == "" {
			t.Errorf("README.md's cluster section lacks a command like %s", re)
			continue
		}
		if !strings.Contains(cluster, m) {
			t.Errorf("README.md's %q is not the command of docs/cluster.md", m)
		}
	}
	for _, want := range []string{"(docs/cluster.md)", "--signal=B:USR1@120", "status 75", "-cpus", "-mem", "-time", "-sbatch", "slurm:", "core-hours"} {
		if !strings.Contains(section, want) {
			t.Errorf("README.md's cluster section does not mention %s", want)
		}
	}
	// The worked example's total is cluster.md's (which
	// TestClusterWorkedExample checks against the estimate).
	total := regexp.MustCompile(`about ([\d,]+)\s+core-hours`).FindStringSubmatch(section)
	if total == nil || !strings.Contains(cluster, "**about "+total[1]+"**") {
		t.Errorf("README.md's cluster section: the worked example's core-hours %v are not cluster.md's total", total)
	}
	// The flags it names exist.
	help := experimentHelp(t)
	for _, f := range []string{"slurm", "report", "dry-run", "cpus", "mem", "time", "max-running", "sbatch"} {
		if !strings.Contains(help, "  -"+f+" ") && !strings.Contains(help, "  -"+f+"\n") {
			t.Errorf("trmaml experiment has no flag -%s", f)
		}
	}
}

// experimentHelp is trmaml experiment -h's output.
func experimentHelp(t *testing.T) string {
	t.Helper()
	var stdout, stderr strings.Builder
	dispatch([]string{"experiment", "-h"}, &stdout, &stderr)
	return stdout.String() + stderr.String()
}

// TestClusterWorkedExample checks docs/cluster.md's worked example against
// the code: each of the five paper-scale experiment files expands to MAML
// and TR-MAML, second order, seeds 1-3, 60,000 iterations of the paper's
// setting, and the cost table's every figure (GFLOP per iteration, the
// estimated seconds per iteration on 2 CPUs of the fast build, hours per
// run, the --time and --mem -slurm asks for, core-hours, their total) is
// what slurm's estimate gives for its cells.
func TestClusterWorkedExample(t *testing.T) {
	opts := run.Options{DataRoot: omniglottest.Root(t), Datasets: new(configs.DataCache)}
	page := docsPage(t, "cluster.md")
	row := regexp.MustCompile(`(?m)^\| (\d+)-way (\d)-shot \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d+) h (\d+) m \| (\d+) MiB \| (\d+) \|$`)
	rows := row.FindAllStringSubmatch(page, -1)
	if len(rows) != 5 {
		t.Fatalf("docs/cluster.md: %d rows in the worked example's cost table, want 5", len(rows))
	}
	total := 0.0
	for _, r := range rows {
		setting := r[1] + "way_" + r[2] + "shot"
		file := filepath.Join("..", "configs", "experiments", "omniglot_paper_"+setting+".yaml")
		_, cfgs, err := experiment.Load(file, opts)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, c := range cfgs {
			seen[fmt.Sprintf("%s-%s-%d", c.Algorithm, c.Order, c.Seed)] = true
			if c.Meta.Iterations != 60000 || conv4.Section(c).Filters != 64 {
				t.Errorf("%s: %s has %d iterations and %d filters, want the paper's 60,000 and 64", file, c.Name, c.Meta.Iterations, conv4.Section(c).Filters)
			}
		}
		if len(cfgs) != 6 || !seen["maml-second-1"] || !seen["trmaml-second-3"] {
			t.Errorf("%s: %d runs %v, want MAML and TR-MAML, second order, seeds 1-3", file, len(cfgs), seen)
		}
		var flops, perIter float64
		var res slurm.Resources
		for _, c := range cfgs {
			s, err := run.Build(c, opts)
			if err != nil {
				t.Fatal(err)
			}
			flops = max(flops, s.Objective.FLOPs())
			p := slurm.SecondsPerIteration(c, s.Objective.FLOPs(), 2, true)
			perIter = max(perIter, p)
			e := slurm.Estimate(c, 0, p, false)
			res = slurm.Resources{CPUs: max(res.CPUs, e.CPUs), MemMiB: max(res.MemMiB, e.MemMiB), Time: max(res.Time, e.Time)}
		}
		c := cfgs[0]
		evaluated := float64(c.Meta.Iterations/c.Eval.Every+1)*float64(c.Eval.Instances+c.Eval.TrainInstances) + 2*float64(c.Eval.FinalInstances)
		hours := perIter * (float64(c.Meta.Iterations) + evaluated/float64(c.Meta.Batch)/2) / 3600
		coreHours := float64(res.CPUs) * hours * float64(len(cfgs))
		total += coreHours
		h, _ := strconv.Atoi(r[6])
		m, _ := strconv.Atoi(r[7])
		for _, f := range []struct {
			what      string
			doc, want string
		}{
			{"GFLOP per iteration", r[3], fmt.Sprintf("%.1f", flops/1e9)},
			{"s per iteration", r[4], fmt.Sprintf("%.2f", perIter)},
			{"hours per run", r[5], fmt.Sprintf("%.1f", hours)},
			{"--time", (time.Duration(h)*time.Hour + time.Duration(m)*time.Minute).String(), res.Time.String()},
			{"--mem", r[8], strconv.Itoa(res.MemMiB)},
			{"core-hours", r[9], fmt.Sprintf("%.0f", coreHours)},
		} {
			if f.doc != f.want {
				t.Errorf("docs/cluster.md, %s-way %s-shot: %s %s, the estimate gives %s", r[1], r[2], f.what, f.doc, f.want)
			}
		}
		if res.CPUs != 2 {
			t.Errorf("%s: %d CPUs per task, want 2", file, res.CPUs)
		}
	}
	want := fmt.Sprintf("about %s", thousands(int(math.Round(total/10)*10)))
	if !strings.Contains(page, "| **all 30 runs** | | | | | | **"+want+"** |") || !strings.Contains(page, want+" core-hours by the estimate") {
		t.Errorf("docs/cluster.md: want the total %s core-hours (%.0f)", want, total)
	}
}

// thousands writes n with a comma between thousands: 1,140.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}
