package slurm

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/trmaml/trmaml/internal/shell"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ExitInterrupted is trmaml's exit status for a run stopped at a checkpoint
// by a signal: the array script requeues a task that exits with it.
const ExitInterrupted = 75

// Warning is the seconds before a time limit at which Slurm signals a task
// (--signal=B:USR1@Warning): time to finish an iteration and checkpoint.
const Warning = 120

// Job is what both scripts run: the trmaml binary, the experiment file and
// directory (absolute paths: a job may start in another directory, on
// another node) and the extra arguments every command takes (-data DIR).
type Job struct {
	Name      string // the experiment's name, for job names
	Trmaml    string
	Config    string
	Out       string
	ExtraArgs []string
	Options   []Option // passed-through sbatch options
}

// command is the shell-quoted trmaml experiment command with args.
func (j Job) command(args ...string) string {
	words := []string{j.Trmaml, "experiment", "-config", j.Config, "-out", j.Out}
	words = append(words, j.ExtraArgs...)
	for i, w := range words {
		words[i] = shell.Quote(w)
	}
	return strings.Join(append(words, args...), " ")
}

func (j Job) header(b *bytes.Buffer, name string, r Resources, logFile string) {
	fmt.Fprintf(b, "#!/bin/bash\n")
	fmt.Fprintf(b, "#SBATCH --job-name=%s\n", name)
	fmt.Fprintf(b, "#SBATCH --cpus-per-task=%d\n", r.CPUs)
	fmt.Fprintf(b, "#SBATCH --mem=%dM\n", r.MemMiB)
	fmt.Fprintf(b, "#SBATCH --time=%s\n", FormatTime(r.Time))
	fmt.Fprintf(b, "#SBATCH --output=%s\n", logFile)
	fmt.Fprintf(b, "#SBATCH --open-mode=append\n")
	for _, o := range j.Options {
		if o.Value == "" {
			fmt.Fprintf(b, "#SBATCH --%s\n", o.Name)
		} else {
			fmt.Fprintf(b, "#SBATCH --%s=%s\n", o.Name, o.Value)
		}
	}
}

// ArrayScript is DIR/slurm/array.sbatch: one task per cell of cells, at
// most maxRunning at once, each running `trmaml experiment -cell
// $SLURM_ARRAY_TASK_ID` with GOMAXPROCS set to its CPUs. Slurm sends the
// batch shell SIGUSR1 Warning seconds before the time limit
// (--signal=B:USR1@Warning), and SIGTERM on scancel or preemption; the
// shell forwards either to trmaml, which checkpoints and exits with
// ExitInterrupted. After SIGUSR1 the shell requeues the task (--requeue),
// which then resumes the cell from its checkpoint; after SIGTERM it does
// not: a scancel stays cancelled, and a preempting site requeues by its own
// policy. Logs, appended across requeues, are logDir/cell-I.log.
func ArrayScript(j Job, cells []int, maxRunning int, r Resources, logDir string) string {
	var b bytes.Buffer
	j.header(&b, "trmaml-"+j.Name, r, logDir+"/cell-%a.log")
	fmt.Fprintf(&b, "#SBATCH --array=%s%%%d\n", Range(cells), maxRunning)
	fmt.Fprintf(&b, "#SBATCH --requeue\n")
	fmt.Fprintf(&b, "#SBATCH --signal=B:USR1@%d\n", Warning)
	fmt.Fprintf(&b, `# Written by trmaml experiment -slurm: one array task per unfinished cell
# of %s; task I trains or resumes cell I (trmaml experiment -list).
set -u
export GOMAXPROCS=${SLURM_CPUS_PER_TASK:-%d}
task="${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"
echo "$(date -u +%%FT%%TZ) cell $SLURM_ARRAY_TASK_ID: job $task on $(hostname), restart ${SLURM_RESTART_COUNT:-0}"
%s -cell "$SLURM_ARRAY_TASK_ID" &
pid=$!
sig=
trap 'sig=USR1; kill -USR1 "$pid" 2>/dev/null' USR1
trap 'sig=TERM; kill -TERM "$pid" 2>/dev/null' TERM
status=0
wait "$pid" || status=$?
while kill -0 "$pid" 2>/dev/null; do # wait returned for a trap: wait for the checkpoint
  status=0
  wait "$pid" || status=$?
done
if [ "$status" -eq %d ] && [ "$sig" = USR1 ]; then
  echo "$(date -u +%%FT%%TZ) cell $SLURM_ARRAY_TASK_ID: checkpointed before the time limit; requeueing $task"
  scontrol requeue "$task"
elif [ "$status" -eq %d ]; then
  echo "$(date -u +%%FT%%TZ) cell $SLURM_ARRAY_TASK_ID: checkpointed on SIG${sig:-TERM}; the same trmaml experiment -slurm command resumes it"
fi
exit "$status"
`, j.Config, r.CPUs, j.command(), ExitInterrupted, ExitInterrupted)
	return b.String()
}

// ReportScript is DIR/slurm/report.sbatch: `trmaml experiment -report`, the
// table and figures of the cells that finished, after every task of the
// array job (afterany: also when some failed). An empty arrayJob (a dry
// run) leaves the dependency to the sbatch command line.
func ReportScript(j Job, arrayJob string, r Resources, logDir string) string {
	var b bytes.Buffer
	j.header(&b, "trmaml-"+j.Name+"-report", r, logDir+"/report.log")
	if arrayJob != "" {
		fmt.Fprintf(&b, "#SBATCH --dependency=afterany:%s\n", arrayJob)
	}
	fmt.Fprintf(&b, `# Written by trmaml experiment -slurm: the table and figures of %s
# once its array job has ended.
set -u
export GOMAXPROCS=${SLURM_CPUS_PER_TASK:-%d}
exec %s -report
`, j.Config, r.CPUs, j.command())
	return b.String()
}

// ReportResources are the report job's requests: one CPU, memory to load
// the runs' results, and a quarter hour.
var ReportResources = Resources{CPUs: 1, MemMiB: 1024, Time: 15 * time.Minute}

// Range writes sorted, distinct cell indices as an --array range list:
// "0-3,5,7-9".
func Range(cells []int) string {
	var parts []string
	for i := 0; i < len(cells); {
		k := i
		for k+1 < len(cells) && cells[k+1] == cells[k]+1 {
			k++
		}
		if k == i {
			parts = append(parts, strconv.Itoa(cells[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cells[i], cells[k]))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}

// CheckPath refuses a path the scripts cannot carry: sbatch splits
// #SBATCH lines (the log files) at white space.
func CheckPath(what, p string) error {
	if strings.ContainsAny(p, " \t\n\r\"'\\%") {
		return fmt.Errorf("%s %q: a path with spaces, quotes, backslashes or %% cannot go into an #SBATCH line: choose another", what, p)
	}
	return nil
}

// ErrNoSbatch is returned when sbatch is not on PATH.
var ErrNoSbatch = errors.New("sbatch not found on PATH: run this on a Slurm login node (or use -dry-run to only write the scripts)")

// Submit runs `sbatch --parsable [args] script` and returns the job id; a
// refusal is returned with sbatch's own message.
func Submit(script string, args ...string) (string, error) {
	path, err := exec.LookPath("sbatch")
	if err != nil {
		return "", ErrNoSbatch
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(path, append(append([]string{"--parsable"}, args...), script)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("sbatch %s refused the job: %s", script, msg)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";") // "ID;cluster" on federations
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch %s printed %q, not a job id", script, stdout.String())
	}
	return id, nil
}
