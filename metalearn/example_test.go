package metalearn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/trmaml/trmaml/graph"
	"github.com/trmaml/trmaml/metalearn"
	sine "github.com/trmaml/trmaml/tasks/sinusoid"
)

// sinusoid is a small version of the paper's sine regression: tasks are
// amplitude intervals of width 0.5 in [0.5, 5]; meta-training sees only
// [0.5, 2] and the rare [4.5, 5].
func sinusoid() (train, test *sine.Tasks, model graph.MLP) {
	train, test, err := sine.New(sine.Spec{
		PhaseMax: 3.14159, XMin: -5, XMax: 5, TaskWidth: 0.5,
		TestAmplitudes: [2]float64{0.5, 5}, TrainAmplitudes: [][2]float64{{0.5, 2}, {4.5, 5}},
	})
	if err != nil {
		panic(err)
	}
	model, err = graph.NewMLP([]int{1, 16, 16, 1}, graph.ReLU)
	if err != nil {
		panic(err)
	}
	return train, test, model
}

// objective compiles the model with one inner SGD step on 5 support points,
// for tasks instances per batch; with metaGradient it also computes the
// exact second-order meta-gradient.
func objective(model graph.MLP, tasks int, metaGradient bool) *graph.Objective {
	obj, err := graph.NewObjective(graph.Spec{
		Model: model, Loss: graph.MSELoss, Tasks: tasks, Support: 5, Query: 5,
		InShape: []int{1}, OutDim: 1, Steps: 1, Alpha: 0.01, MetaGradient: metaGradient,
	})
	if err != nil {
		panic(err)
	}
	return obj
}

// Training TR-MAML and MAML on sinusoid tasks: the Trainer draws tasks from
// the distribution p, which TR-MAML moves toward the worst tasks, and Run
// is the training loop (a context stops it between iterations). The
// Evaluator then measures each solution on every meta-test task.
func ExampleTrainer() {
	train, test, model := sinusoid()
	w0, err := model.Init(graph.He, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	ev := metalearn.NewEvaluator(objective(model, 10, false), 5, 5, 1, 1)
	before, err := ev.Evaluate(w0, test, 100, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		panic(err)
	}
	fmt.Printf("before training: meta-test worst-task loss %.1f\n", before.Worst)

	for _, method := range []metalearn.MethodSettings{metalearn.TRMAML{PLR: 0.0005}, metalearn.MAML{}} {
		tr, err := metalearn.NewTrainer(objective(model, 4, true), train, w0, metalearn.Settings{
			Method:     method.New(),
			Iterations: 300,
			Optimizer:  metalearn.NewAdam(0.01, len(w0)),
			Schedule:   metalearn.Cosine{Max: 0.01, Min: 0.001, Iterations: 300},
			Seed:       1,
		})
		if err != nil {
			panic(err)
		}
		if err := tr.Run(context.Background(), nil); err != nil {
			panic(err)
		}
		w, p := tr.Solution()
		after, err := ev.Evaluate(w, test, 100, rand.New(rand.NewPCG(9, 9)))
		if err != nil {
			panic(err)
		}
		fmt.Printf("%T: p of %s %.2f; meta-test mean loss %.1f, worst-task %.1f\n",
			method, train.Name(len(p)-1), p[len(p)-1], after.Mean, after.Worst)
	}
	// Output:
	// before training: meta-test worst-task loss 184.8
	// metalearn.TRMAML: p of amplitude [4.5,5.0) 1.00; meta-test mean loss 5.0, worst-task 12.7
	// metalearn.MAML: p of amplitude [4.5,5.0) 0.25; meta-test mean loss 5.5, worst-task 14.3
}

// Stopping a Trainer through its context and resuming it from a
// checkpoint: Snapshot (the State) and the Optimizer's exported fields are
// all a run needs, here through JSON as a file would hold them. A new
// Trainer with the same Settings, given the optimizer's fields and the
// restored State, finishes exactly as the run that never stopped.
func ExampleTrainer_Snapshot() {
	train, _, model := sinusoid()
	w0, err := model.Init(graph.He, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	settings := func() metalearn.Settings {
		return metalearn.Settings{
			Method:     metalearn.TRMAML{PLR: 0.0005}.New(),
			Iterations: 200,
			Optimizer:  metalearn.NewAdam(0.01, len(w0)),
			Schedule:   metalearn.Cosine{Max: 0.01, Min: 0.001, Iterations: 200},
			Seed:       1,
		}
	}
	newTrainer := func(s metalearn.Settings) *metalearn.Trainer {
		tr, err := metalearn.NewTrainer(objective(model, 4, true), train, w0, s)
		if err != nil {
			panic(err)
		}
		return tr
	}

	// The run that is never stopped.
	full := newTrainer(settings())
	if err := full.Run(context.Background(), nil); err != nil {
		panic(err)
	}

	// A run stopped after 80 iterations (a signal handler would cancel).
	ctx, cancel := context.WithCancel(context.Background())
	tr := newTrainer(settings())
	err = tr.Run(ctx, func(metalearn.StepStats) error {
		if tr.State.Iteration == 80 {
			cancel()
		}
		return nil
	})
	fmt.Println("stopped:", err, "at iteration", tr.State.Iteration)
	state, err := tr.Snapshot()
	if err != nil {
		panic(err)
	}
	savedState, _ := json.Marshal(state)
	savedOptimizer, _ := json.Marshal(tr.Settings.Optimizer)

	// Resumed from the checkpoint.
	s := settings()
	if err := json.Unmarshal(savedOptimizer, s.Optimizer); err != nil {
		panic(err)
	}
	var restored metalearn.State
	if err := json.Unmarshal(savedState, &restored); err != nil {
		panic(err)
	}
	resumed := newTrainer(s)
	if err := resumed.Restore(restored); err != nil {
		panic(err)
	}
	if err := resumed.Run(context.Background(), nil); err != nil {
		panic(err)
	}
	sameBits := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
	}
	w1, p1 := full.Solution()
	w2, p2 := resumed.Solution()
	fmt.Println("resumed run equals the uninterrupted one bit for bit:", sameBits(w1, w2) && sameBits(p1, p2))
	// Output:
	// stopped: context canceled at iteration 80
	// resumed run equals the uninterrupted one bit for bit: true
}

// ChaseWorst is a Method of one's own: after each iteration it moves p a
// fraction Rate of the way toward the task with the largest loss in the
// batch, p <- (1 - Rate) p + Rate e_worst, and it draws the tasks of an
// iteration from p itself, each loss weighted 1/C, so that the weighted
// meta-gradient estimates sum_i p_i grad F_i(w) without bias. Its state is
// p alone, which the Trainer holds and checkpoints.
type ChaseWorst struct {
	Rate  float64
	batch int
}

// Init implements metalearn.Method: p starts uniform.
func (m *ChaseWorst) Init(masses []float64, batch int) ([]float64, error) {
	if !(m.Rate >= 0 && m.Rate <= 1) {
		return nil, fmt.Errorf("ChaseWorst: Rate must be in [0, 1], got %v", m.Rate)
	}
	m.batch = batch
	p := make([]float64, len(masses))
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
	return p, nil
}

// Draw implements metalearn.Method: task i with probability p_i.
func (m *ChaseWorst) Draw(rng *rand.Rand, p []float64) (int, float64) {
	u, i := rng.Float64(), 0
	for ; i < len(p)-1 && u >= p[i]; i++ {
		u -= p[i]
	}
	return i, 1 / float64(m.batch)
}

// Update implements metalearn.Method.
func (m *ChaseWorst) Update(p []float64, tasks []int, losses []float64) {
	worst := 0
	for k := range losses {
		if losses[k] > losses[worst] {
			worst = k
		}
	}
	for i := range p {
		p[i] *= 1 - m.Rate
	}
	p[tasks[worst]] += m.Rate
}

// Check implements metalearn.Method: p must be a distribution.
func (m *ChaseWorst) Check(name string, p []float64) error {
	sum := 0.0
	for i, v := range p {
		if !(v >= 0) {
			return fmt.Errorf("%s[%d] = %v: must be >= 0", name, i, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("%s sums to %v, want 1", name, sum)
	}
	return nil
}

// A user-defined algorithm plugs into the Trainer as a Method (ChaseWorst,
// defined above), and the loop can be written by hand with Step. ChaseWorst
// is a toy: drawing from p, it ends up training on the rarest, hardest task
// alone.
func ExampleMethod() {
	train, test, model := sinusoid()
	w0, err := model.Init(graph.He, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	tr, err := metalearn.NewTrainer(objective(model, 4, true), train, w0, metalearn.Settings{
		Method:     &ChaseWorst{Rate: 0.05},
		Iterations: 300,
		Optimizer:  metalearn.NewAdam(0.01, len(w0)),
		Seed:       1,
	})
	if err != nil {
		panic(err)
	}
	for tr.State.Iteration < tr.Settings.Iterations {
		if _, err := tr.Step(); err != nil {
			panic(err)
		}
	}
	w, p := tr.Solution()
	ev := metalearn.NewEvaluator(objective(model, 10, false), 5, 5, 1, 1)
	stats, err := ev.Evaluate(w, test, 100, rand.New(rand.NewPCG(9, 9)))
	if err != nil {
		panic(err)
	}
	for i := range p {
		fmt.Printf("p(%s) = %.2f\n", train.Name(i), p[i])
	}
	fmt.Printf("meta-test: mean loss %.1f, worst %.1f (%s)\n", stats.Mean, stats.Worst, test.Name(stats.WorstTask))
	// Output:
	// p(amplitude [0.5,1.0)) = 0.00
	// p(amplitude [1.0,1.5)) = 0.00
	// p(amplitude [1.5,2.0)) = 0.00
	// p(amplitude [4.5,5.0)) = 1.00
	// meta-test: mean loss 4.0, worst 8.0 (amplitude [4.5,5.0))
}

// The Evaluator runs the paper's protocol: instances spread evenly over the
// tasks, each adapted on its support points and measured on its query
// points; TaskStats summarise the per-task averages.
func ExampleEvaluator() {
	_, test, model := sinusoid()
	w, err := model.Init(graph.He, 0, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	ev := metalearn.NewEvaluator(objective(model, 9, false), 5, 5, 1, 1)
	stats, err := ev.Evaluate(w, test, 18, rand.New(rand.NewPCG(3, 3)))
	if err != nil {
		panic(err)
	}
	for i, l := range stats.PerTask {
		fmt.Printf("%s: %d instances, loss %.1f\n", test.Name(i), stats.Count[i], l)
	}
	fmt.Printf("mean %.1f, worst %.1f (%s)\n", stats.Mean, stats.Worst, test.Name(stats.WorstTask))
	// Output:
	// amplitude [0.5,1.0): 2 instances, loss 1.2
	// amplitude [1.0,1.5): 2 instances, loss 9.2
	// amplitude [1.5,2.0): 2 instances, loss 23.8
	// amplitude [2.0,2.5): 2 instances, loss 15.7
	// amplitude [2.5,3.0): 2 instances, loss 7.5
	// amplitude [3.0,3.5): 2 instances, loss 66.8
	// amplitude [3.5,4.0): 2 instances, loss 35.6
	// amplitude [4.0,4.5): 2 instances, loss 58.4
	// amplitude [4.5,5.0): 2 instances, loss 12.8
	// mean 25.6, worst 66.8 (amplitude [3.0,3.5))
}
