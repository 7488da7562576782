package graph

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"github.com/trmaml/trmaml/metalearn"
)

// Lanes: an objective without a meta-gradient (an evaluation) computes each
// task's adapted loss from that task's data and the meta-parameters alone,
// so its tasks can run as independent graphs. Ops split their tasks over
// the cores too (parallelTasks), but every op waits for its slowest task
// before the next starts: with 8 tasks on 2 cores the cores idle for a
// tenth to a fifth of an evaluation. Whole graphs on their own goroutines
// meet only at the end of a call.

// lanesRunning counts the goroutines running lanes at this moment, of all
// objectives.
var lanesRunning atomic.Int32

// workers is the number of goroutines an op may split its tasks or values
// over: the GOMAXPROCS cores divided among the goroutines running lanes
// (one each for 2 lanes on 2 cores, 8 each on 16). Lanes fill the cores
// themselves; an op of a lane that split its tasks as well would only wait
// at its barrier and hold more scratch buffers at once. A lane that
// finishes early hands its share to the others.
func workers() int {
	return max(1, runtime.GOMAXPROCS(0)/max(1, int(lanesRunning.Load())))
}

// lane is the objective of tasks [from, to) of an objective in lanes.
type lane struct {
	obj      *Objective
	from, to int
}

// laneTasks is the number of tasks of a lane when Spec.Lanes is 0. The
// lanes depend on the number of tasks only, never on the machine: a
// product's kernel may round a row differently when the number of rows
// changes (OpenBLAS's small-matrix kernels do, for the CNN's last layer,
// whose product stacks all the tasks' rows), so the values of an objective
// depend on its lanes in the last bits, and must not depend on the cores.
// Four tasks a lane fill 2 cores at meta-batch 8; on more cores the ops of
// each lane split its tasks (workers).
const laneTasks = 4

// lanes is the number of lanes of an objective of s: Lanes (if 0, one per
// laneTasks tasks, see laneFLOPs), at most Tasks, and 1 with a
// meta-gradient.
func (s Spec) lanes() int {
	if s.MetaGradient {
		return 1
	}
	n := s.Lanes
	if n == 0 {
		n = (s.Tasks + laneTasks - 1) / laneTasks
	}
	return min(n, s.Tasks)
}

// laneFLOPs is the fewest floating-point operations of products and
// convolutions per task (Objective.FLOPs) for which Spec.Lanes 0 splits an
// objective into lanes. Smaller tasks (the sine MLP's, 0.1 MFLOP) keep one
// graph: they cost little and their ops do not split over the cores, so
// lanes would only change their values in the last bits. The CNN's (a
// 5-way instance is 1.3 GFLOP) take lanes.
const laneFLOPs = 1 << 24

// newLanes builds an objective of spec as n graphs of Tasks/n tasks (the
// sizes differ by at most one), which share one buffer pool: each lane's
// arena holds a buffer of it while the lane runs, and together they hold
// about what one graph of all the tasks would. Shared with another
// objective's pool (ShareBuffers), they borrow parts of its buffers.
func newLanes(spec Spec, n int, tune tuning) (*Objective, error) {
	o := &Objective{spec: spec, predOut: -1}
	for l := range n {
		from, to := l*spec.Tasks/n, (l+1)*spec.Tasks/n
		s := spec
		s.Tasks, s.Lanes = to-from, 1
		sub, err := newObjective(s, tune)
		if err != nil {
			return nil, err
		}
		if l == 0 && spec.Lanes == 0 && sub.FLOPs() < laneFLOPs*float64(s.Tasks) {
			spec.Lanes = 1 // small tasks: one graph
			return newObjective(spec, tune)
		}
		if l > 0 {
			sub.joinPool(o.lanes[0].obj.prog.Pool)
		}
		o.lanes = append(o.lanes, lane{obj: sub, from: from, to: to})
	}
	o.nParams = o.lanes[0].obj.nParams
	return o, nil
}

// graphs are the objectives of o's compiled graphs: o, or its lanes'
// (or groups').
func (o *Objective) graphs() []*Objective {
	if o.lanes == nil {
		return []*Objective{o}
	}
	gs := make([]*Objective, len(o.lanes))
	for i, l := range o.lanes {
		gs[i] = l.obj
	}
	return gs
}

// programs are the compiled graphs of o: its own, or its lanes'.
func (o *Objective) programs() []*exec.Program {
	var ps []*exec.Program
	for _, g := range o.graphs() {
		ps = append(ps, g.prog)
	}
	return ps
}

// runLanes runs every lane on its own rows of b, on up to GOMAXPROCS
// goroutines at once (LossesMetric has checked the arguments), and returns
// the first lane's error, if any.
func (o *Objective) runLanes(w []float64, b *metalearn.Batch, losses, metric []float64) error {
	errs := make([]error, len(o.lanes))
	next := make(chan int, len(o.lanes))
	for i := range o.lanes {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	procs := min(len(o.lanes), runtime.GOMAXPROCS(0))
	lanesRunning.Add(int32(procs))
	for range procs {
		wg.Go(func() {
			defer lanesRunning.Add(-1)
			for i := range next {
				l := o.lanes[i]
				var m []float64
				if metric != nil {
					m = metric[l.from:l.to]
				}
				errs[i] = l.obj.LossesMetric(w, b.Rows(l.from, l.to), nil, losses[l.from:l.to], m, nil)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
