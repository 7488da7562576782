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
	_ "github.com/trmaml/trmaml/models/builtin" // the built-in models, which configs name
	_ "github.com/trmaml/trmaml/tasks"          // the task families of the configs it sizes
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

// FLOPsPerCPUSecond is the training arithmetic one CPU does per second in
// the fast build (OpenBLAS, SIMD loops) for a model that states no rate of
// its own (configs.Rated), counted as graph.Objective.FLOPs
// counts it (the matrix products and convolutions of one training call).
// Measured on the paper's five Omniglot settings (64 filters, meta-batch 8,
// second order) with `GOMAXPROCS=1 cnnbench -ways N -shots K -iters 3` at
// an AMD EPYC Zen 4 with AVX-512 (OpenBLAS Cooperlake kernels) shared
// with two training runs: 0.285, 0.513, 1.011,
// 0.991 and 2.082 CPU-seconds per iteration, 5-way 1-shot to 20-way 5-shot,
// 106 to 121 GFLOP per CPU-second; the paper-scale 5-way runs averaged
// 0.290 s of CPU per iteration over 37,000 iterations. Rounded down to 80
// for slower CPUs: a task that reaches its --time anyway checkpoints and is
// requeued.
const FLOPsPerCPUSecond = 80e9

// pureGoSlowdown is how much longer the default build (gonum's pure-Go
// BLAS, the SSE loops on amd64) takes over the CNN's arithmetic than the
// fast build: 4.7-6.0 and 6.6-6.9 times the CPU time for the 5-way and
// 20-way 1-shot iterations (`GOMAXPROCS=1 cnnbench -ways N -order second`,
// the SSE loops in the default build, two alternated rounds on a 2-core
// AMD EPYC Zen 5: 1.014-1.042
// against 0.168-0.220 s, 4.519-5.444 against 0.689-0.790 s).
const pureGoSlowdown = 6

// minSecondsPerIteration is the floor of the per-iteration estimate: the
// small sine graphs cost more than their arithmetic says (1.2 to 3.1 ms
// per iteration measured on the quick grid's cells).
const minSecondsPerIteration = 0.002

// SecondsPerIteration estimates the wall-clock seconds of one training
// iteration of c whose graph does flops of arithmetic
// (graph.Objective.FLOPs), at its model's rate, on cpus CPUs of the fast
// build (fastBuild) or of the default build: the instances an iteration adapts run in
// parallel, so up to that many CPUs share the work; at least minSecondsPerIteration.
func SecondsPerIteration(c configs.Config, flops float64, cpus int, fastBuild bool) float64 {
	secs := flops / rate(c) / float64(max(1, min(cpus, c.DrawnOrBatch())))
	if !fastBuild {
		secs *= pureGoSlowdown
	}
	return max(minSecondsPerIteration, secs)
}

// rate is the training arithmetic per CPU-second of c's model: its own
// (configs.Rated), else FLOPsPerCPUSecond.
func rate(c configs.Config) float64 {
	m, err := configs.ModelNamed(c.Model.Kind)
	r, ok := m.(configs.Rated)
	if err != nil || !ok {
		return FLOPsPerCPUSecond
	}
	fam, err := c.Family()
	if err != nil {
		return FLOPsPerCPUSecond
	}
	return r.FLOPsPerCPUSecond(c, fam.IO(c))
}

// DefaultCPUs is the CPUs a task of config c asks for, as its model says
// (configs.Model.CPUs): 2 for the CNN, whose convolutions use both, 1 for
// the small MLPs.
func DefaultCPUs(c configs.Config) int {
	if m, ok := configs.LookupModel(c.Model.Kind); ok {
		return m.CPUs(c)
	}
	return 1
}

// Estimate returns the default resources of a task training c, one
// iteration of which takes perIteration seconds: measured on finished runs
// like it, evaluations included (measured), or estimated
// (SecondsPerIteration). Its memory is the config's estimate
// (configs.Config.Memory) and data bytes of the family's data that the
// config alone does not give (DataBytes).
func Estimate(c configs.Config, data, perIteration float64, measured bool) Resources {
	mem := int(math.Ceil((c.Memory().Total() + data) * memMargin / (1 << 20)))
	return Resources{
		CPUs:   DefaultCPUs(c),
		MemMiB: max(minMemMiB, roundUp(mem, 64)),
		Time:   EstimateTime(c, perIteration, measured),
	}
}

// DataBytes is the memory of c's data beyond its config's estimate, as its
// family measures it on the files under the data root root (configs.Env):
// an image folder's decoded images; 0 for a family whose Memory gives it
// all.
func DataBytes(c configs.Config, root string) (float64, error) {
	f, err := c.Family()
	if err != nil {
		return 0, err
	}
	if d, ok := f.(configs.DataSizer); ok {
		return d.DataBytes(c, configs.Env{DataRoot: root})
	}
	return 0, nil
}

// EstimateTime is the --time of a task training c at perIteration seconds
// per iteration: the iterations times perIteration plus, unless the time
// was measured with them, the evaluations (every eval.every iterations, and
// the final one; an evaluated instance costs about half a training
// instance, forward and inner step without the meta-gradient), times
// timeMargin plus timeSlack, rounded up to whole minutes.
func EstimateTime(c configs.Config, perIteration float64, measured bool) time.Duration {
	secs := perIteration * float64(c.Meta.Iterations)
	if !measured {
		perInstance := perIteration / float64(c.DrawnOrBatch()) / 2
		evals := float64(c.Meta.Iterations/max(1, c.Eval.Every) + 1)
		final := float64(c.Eval.Instances + c.Eval.TrainInstances)
		if c.Eval.FinalInstances > 0 {
			final = 2 * float64(c.Eval.FinalInstances)
		}
		secs += perInstance * (evals*float64(c.Eval.Instances+c.Eval.TrainInstances) + final)
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
