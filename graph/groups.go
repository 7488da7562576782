package graph

import "github.com/trmaml/trmaml/metalearn"

// Task groups: a meta-gradient graph holds every task's activations of the
// inner steps and the query pass until the backward pass has read them,
// so its peak memory grows with the meta-batch: MAML's mini-ImageNet
// network (84x84x3 images, 80 per 1-shot task, 5 inner steps) holds about
// 310 MiB per task in float32. An objective of large tasks therefore runs
// them in groups of groupTasks, one group after another in one buffer
// pool, and sums the groups' meta-gradients in order: the meta-gradient is
// linear in the tasks' weights, so the result is the same up to the
// rounding of that sum, and the peak is one group's. The groups depend on
// the Spec alone, never on the cores, so the values do not either; a group
// of fewer tasks than cores splits its tasks' convolutions over them
// (splitTasks).

// groupTasks is the number of tasks of a group: two fill 2 cores a task
// each.
const groupTasks = 2

// groupInputs is the fewest input values per task (support and query
// images) for which a meta-gradient objective runs its tasks in groups:
// mini-ImageNet's 80 images of 84x84x3 are 1.7 million, the paper's
// Omniglot models' (at most 20-way, 220 images of 28x28) 0.17 million,
// whose graphs are unchanged (tuning.groupInputs overrides it).
const groupInputs = 1 << 20

// groups is the number of task groups of an objective of s: 1 unless it
// has a meta-gradient, more than groupTasks tasks and large ones.
func (s Spec) groups(tune tuning) int {
	if !s.MetaGradient || s.Tasks <= groupTasks || (s.Support+s.Query)*s.inDim() < or(tune.groupInputs, groupInputs) {
		return 1
	}
	return (s.Tasks + groupTasks - 1) / groupTasks
}

// newGroups builds an objective of spec as n graphs of its tasks in turn,
// sharing one buffer pool.
func newGroups(spec Spec, n int, tune tuning) (*Objective, error) {
	o := &Objective{spec: spec, predOut: -1, inTurn: true}
	for l := range n {
		from, to := l*spec.Tasks/n, (l+1)*spec.Tasks/n
		s := spec
		s.Tasks = to - from
		sub, err := newObjective(s, tune)
		if err != nil {
			return nil, err
		}
		if l > 0 {
			sub.joinPool(o.lanes[0].obj.prog.Pool)
		}
		o.lanes = append(o.lanes, lane{obj: sub, from: from, to: to})
	}
	o.nParams = o.lanes[0].obj.nParams
	return o, nil
}

// runGroups runs the groups one after another on their rows of b and sums
// their meta-gradients into grad in group order (LossesMetric has checked
// the arguments).
func (o *Objective) runGroups(w []float64, b *metalearn.Batch, weights, losses, metric, grad []float64) error {
	if grad != nil && o.part == nil {
		o.part = make([]float64, len(grad))
	}
	for i, l := range o.lanes {
		var m, ws []float64
		if metric != nil {
			m = metric[l.from:l.to]
		}
		if weights != nil {
			ws = weights[l.from:l.to]
		}
		g := grad
		if i > 0 && grad != nil {
			g = o.part
		}
		if err := l.obj.LossesMetric(w, b.Rows(l.from, l.to), ws, losses[l.from:l.to], m, g); err != nil {
			return err
		}
		if i > 0 {
			for j := range grad {
				grad[j] += o.part[j]
			}
		}
	}
	return nil
}
