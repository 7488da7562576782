package slurm_test

import (
	"fmt"
	"time"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/slurm"
)

// The unfinished cells of a grid as an --array range, and a time limit in
// sbatch's format.
func ExampleRange() {
	fmt.Println(slurm.Range([]int{0, 1, 2, 5, 7, 8}))
	fmt.Println(slurm.FormatTime(26*time.Hour + 5*time.Minute))
	// Output:
	// 0-2,5,7-8
	// 1-02:05:00
}

// The default requests of one cell of the paper's 20-way 1-shot Omniglot
// grid, whose training graph does 120 GFLOP per iteration
// (graph.Objective.FLOPs), in the fast build: 2 CPUs, the memory estimate
// with its margin, and 60,000 iterations of 0.75 s with the evaluations,
// times 1.5, plus 10 minutes.
func ExampleEstimate() {
	c, err := configs.Builtin("omniglot_20way_1shot_maml")
	if err != nil {
		panic(err)
	}
	cpus := slurm.DefaultCPUs(c)
	r := slurm.Estimate(c, 0, slurm.SecondsPerIteration(c, 120e9, cpus, true), false)
	fmt.Printf("--cpus-per-task=%d --mem=%dM --time=%s\n", r.CPUs, r.MemMiB, slurm.FormatTime(r.Time))
	// Output:
	// --cpus-per-task=2 --mem=1728M --time=0-19:22:00
}
