package slurm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// appendJob adds line to dir's JobsFile.
func appendJob(dir, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, JobsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}

// SubmittedJobs reads DIR/slurm/jobs.txt: the job ids by kind ("array",
// "report").
func SubmittedJobs(dir string) map[string][]string {
	jobs := map[string][]string{}
	raw, err := os.ReadFile(filepath.Join(dir, JobsFile))
	if err != nil {
		return jobs
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 {
			jobs[f[0]] = append(jobs[f[0]], f[1])
		}
	}
	return jobs
}

// States are the Slurm states of the submitted jobs of dir (an
// experiment's DIR/slurm): each cell's latest array task (PENDING, RUNNING,
// COMPLETED, CANCELLED, ...) and the latest report job's, "" when unknown.
// A cell submitted again takes the state of its task in the later array.
func States(dir string) (cells map[int]string, report string) {
	cells = map[int]string{}
	jobs := SubmittedJobs(dir)
	ids := jobs["array"]
	if r := jobs["report"]; len(r) > 0 {
		report = r[len(r)-1]
		ids = append(slices.Clone(ids), report)
	}
	states := jobStates(ids)
	for _, id := range jobs["array"] {
		for task, state := range states {
			job, index, ok := strings.Cut(task, "_")
			if i, err := strconv.Atoi(index); ok && err == nil && job == id {
				cells[i] = state
			}
		}
	}
	if report != "" {
		report = states[report]
	}
	return cells, report
}

// jobStates asks Slurm for the states of the jobs ids, keyed by job id
// (ID, or ID_I for task I of an array): squeue first, which knows the
// pending and running jobs and, for a while after they end (MinJobAge,
// 5 minutes by default), the ended ones; then sacct, where accounting is
// enabled, for the jobs squeue no longer knows. Without either command the
// states are unknown (empty).
func jobStates(ids []string) map[string]string {
	states := map[string]string{}
	if len(ids) == 0 {
		return states
	}
	known := map[string]bool{}
	if _, err := exec.LookPath("squeue"); err == nil {
		// squeue fails only when it knows none of the ids.
		raw, _ := exec.Command("squeue", "-h", "-r", "-t", "all", "-j", strings.Join(ids, ","), "-o", "%i %T").Output()
		for _, line := range strings.Split(string(raw), "\n") {
			if id, state, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
				states[id] = state
				job, _, _ := strings.Cut(id, "_")
				known[job] = true
			}
		}
	}
	var rest []string
	for _, id := range ids {
		if !known[id] {
			rest = append(rest, id)
		}
	}
	if len(rest) == 0 {
		return states
	}
	if _, err := exec.LookPath("sacct"); err != nil {
		return states
	}
	raw, err := exec.Command("sacct", "-n", "-X", "-P", "-j", strings.Join(rest, ","), "-o", "JobID,State").Output()
	if err != nil {
		return states // accounting disabled, or no such jobs
	}
	for _, line := range strings.Split(string(raw), "\n") {
		id, state, ok := strings.Cut(strings.TrimSpace(line), "|")
		if f := strings.Fields(state); ok && len(f) > 0 && !strings.Contains(id, "[") { // "CANCELLED by 1000"; not "ID_[4-7]"
			states[id] = f[0]
		}
	}
	return states
}

// QueuedCells are the cells an earlier submission has pending or running
// in Slurm.
func QueuedCells(dir string) map[int]bool {
	q := map[int]bool{}
	cells, _ := States(dir)
	for i, s := range cells {
		switch s {
		case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING",
			"STAGE_OUT", "RESIZING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED":
			q[i] = true
		}
	}
	return q
}
