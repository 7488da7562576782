// Package slurm writes the Slurm batch scripts that run an experiment grid
// as a job array, one array task per cell (`trmaml experiment -cell I`), and
// a report job after it; it sizes the tasks' resources from what the
// engine knows about a config and checks sbatch options given by the user.
// It only writes text: submitting is sbatch's job (Submit runs it).
package slurm

import (
	"fmt"
	"math"
	"time"

	"github.com/trmaml/trmaml/configs"
	_ "github.com/trmaml/trmaml/tasks" // the task families of the configs it sizes
)

// Resources are one array task's requests.
type Resources struct {
	CPUs   int           // --cpus-per-task
	MemMiB int           // --mem, in MiB
	Time   time.Duration // --time
}

// The margins of the estimates: memory is the config's estimate
// (configs.Config.Memory) times memMargin, time the estimated or measured
// running time times timeMargin plus timeSlack (start-up, data loading, a
// slower node).
const (
	memMargin  = 1.5
	minMemMiB  = 512
	timeMargin = 1.5
	timeSlack  = 10 * time.Minute
)

// secondsPerTrainByte is the estimated wall-clock seconds of one training
// iteration per byte of the training graph (configs MemoryEstimate
// TrainGraph) on 2 cores, from the measured Omniglot paper-scale runs: 20-way
// 1-shot, 0.81 s per iteration with a 2617 MB graph (5-way 1-shot, 0.17 s
// with 665 MB, is then over-estimated by a fifth, on the safe side).
const secondsPerTrainByte = 0.81 / 2617e6

// minSecondsPerIteration is the floor of the per-iteration estimate: the
// small sine graphs cost more than their bytes say.
const minSecondsPerIteration = 0.002

// DefaultCPUs is the CPUs a task of config c asks for: 2 for the CNN of the
// families that train it (configs.Family.Model), whose convolutions use
// both (the measured timings are on 2 cores), 1 for the small MLPs.
func DefaultCPUs(c configs.Config) int {
	if fam, err := c.Family(); err == nil && fam.Model() == "cnn" {
		return 2
	}
	return 1
}

// Estimate returns the default resources of a task training config c.
// measured, if positive, is the measured wall-clock seconds per iteration,
// evaluations included, of a run like it (a finished cell of the same grid),
// used instead of the estimate from the graph's size.
func Estimate(c configs.Config, measured float64) Resources {
	mem := int(math.Ceil(c.Memory().Total() * memMargin / (1 << 20)))
	return Resources{
		CPUs:   DefaultCPUs(c),
		MemMiB: max(minMemMiB, roundUp(mem, 64)),
		Time:   EstimateTime(c, measured),
	}
}

// EstimateTime is the --time of a task training c: the iterations times the
// seconds per iteration (measured, or estimated from the training graph's
// size) plus the evaluations (every eval.every iterations, and the final
// one; an evaluated instance costs about half a training instance, forward
// and inner step without the meta-gradient), times timeMargin plus
// timeSlack, rounded up to whole minutes.
func EstimateTime(c configs.Config, measured float64) time.Duration {
	var secs float64
	if measured > 0 {
		secs = measured * float64(c.Meta.Iterations)
	} else {
		perIter := max(minSecondsPerIteration, c.Memory().TrainGraph*secondsPerTrainByte)
		perInstance := perIter / float64(c.Meta.Batch) / 2
		evals := float64(c.Meta.Iterations/max(1, c.Eval.Every) + 1)
		final := float64(c.Eval.Instances + c.Eval.TrainInstances)
		if c.Eval.FinalInstances > 0 {
			final = 2 * float64(c.Eval.FinalInstances)
		}
		secs = perIter*float64(c.Meta.Iterations) +
			perInstance*(evals*float64(c.Eval.Instances+c.Eval.TrainInstances)+final)
	}
	d := time.Duration(secs*timeMargin*float64(time.Second)) + timeSlack
	return d.Truncate(time.Minute) + time.Minute
}

func roundUp(n, unit int) int { return (n + unit - 1) / unit * unit }

// FormatTime writes d as sbatch's --time: days-hours:minutes:seconds.
func FormatTime(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s/3600%24, s/60%60, s%60)
}
