// Command quickstart meta-trains TR-MAML on the paper's sinusoid tasks
// through the library and prints what it reached on the meta-training and
// meta-test tasks: the README's code example, kept identical to it by
// readme_test.go.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
)

func main() {
	cfg, err := configs.Builtin("sine_k5_trmaml") // the paper's K = 5 TR-MAML setting
	if err != nil {
		log.Fatal(err)
	}
	cfg.Meta.Iterations, cfg.Eval.Every = 2000, 1000                                   // a short run: about 45 s of CPU
	res, err := run.Train(context.Background(), cfg, "runs/quickstart", run.Options{}) // refuses a used directory
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("meta-train: mean MSE %.3f, worst task %.3f\n", res.MetaTrain.Mean, res.MetaTrain.Worst)
	fmt.Printf("meta-test:  mean MSE %.3f, worst task %.3f (%s)\n", res.MetaTest.Mean, res.MetaTest.Worst, res.MetaTest.WorstTask)
}
