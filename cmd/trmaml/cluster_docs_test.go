package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeClusterSection checks that README.md has the section "Running
// on a cluster" with the three commands of docs/cluster.md (submit,
// status, report), each with the flags the command really takes, and a
// link to cluster.md.
func TestReadmeClusterSection(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
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
