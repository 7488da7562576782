package rundir_test

import (
	"fmt"
	"path/filepath"

	"github.com/trmaml/trmaml/rundir"
)

// Reading the files of a finished run directory, as reports do: no engine
// or data set is needed.
func Example() {
	dir := filepath.Join("..", "run", "testdata", "legacy", "maml-T1", "want")
	m, err := rundir.ReadMetrics(filepath.Join(dir, rundir.MetricsFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := rundir.ReadResult(filepath.Join(dir, rundir.ResultFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	last := len(m.Iterations) - 1
	fmt.Printf("%s: %d evaluations, the last at iteration %d\n", res.Name, len(m.Iterations), m.Iterations[last])
	fmt.Printf("meta-test %s: mean %.3f, worst %.3f (%s)\n", res.Metric, res.MetaTest.Mean, res.MetaTest.Worst, res.MetaTest.WorstTask)
	fmt.Println("the run's state:", rundir.StateFiles())
	// Output:
	// legacy-maml-T1: 4 evaluations, the last at iteration 30
	// meta-test mse: mean 4.130, worst 17.689 (amplitude [4.98,4.99))
	// the run's state: [config.yaml validation.csv model_best_val.json metrics.csv p.csv tasks.csv checkpoint.json model.json result.json]
}
