package graph

import (
	"fmt"
	"reflect"

	"github.com/trmaml/trmaml/graph/internal/exec"
	"gorgonia.org/gorgonia"
)

// Graph is a gorgonia expression graph that remembers which of its nodes were
// created by differentiation, so that a later Grad knows when it is
// differentiating through a gradient (a nested, second-order sweep) and can
// refuse ops whose derivatives are known to be wrong there.
type Graph struct {
	*gorgonia.ExprGraph
	gradientNodes map[int64]bool
}

// newGraph returns an empty Graph.
func newGraph() *Graph {
	return &Graph{ExprGraph: gorgonia.NewGraph(), gradientNodes: map[int64]bool{}}
}

// brokenWhenNested names the gorgonia v0.9.18 ops whose symbolic derivatives
// crash or return wrong values once they are differentiated a second time
// (measured against finite differences). Keys are the ops' Go type names.
var brokenWhenNested = map[string]string{
	"*gorgonia.softmaxOp":       "SoftMax/LogSoftMax (its derivative op panics when differentiated again)",
	"gorgonia.softmaxOp":        "SoftMax/LogSoftMax (its derivative op panics when differentiated again)",
	"*gorgonia.sliceOp":         "Slice (its gradient op routes the second-order gradient to the wrong input)",
	"gorgonia.sliceOp":          "Slice (its gradient op routes the second-order gradient to the wrong input)",
	"*gorgonia.maxPoolOp":       "MaxPool2D (its derivative op panics when differentiated again)",
	"gorgonia.maxPoolOp":        "MaxPool2D (its derivative op panics when differentiated again)",
	"*gorgonia.BatchNormOp":     "BatchNorm (its backward op marks every input non-differentiable: wrong values)",
	"*gorgonia.im2colOp":        "Conv2d with respect to its input (col2im crashes when differentiated again)",
	"gorgonia.im2colOp":         "Conv2d with respect to its input (col2im crashes when differentiated again)",
	"*gorgonia.col2imOp":        "Conv2d with respect to its input (col2im crashes when differentiated again)",
	"gorgonia.col2imOp":         "Conv2d with respect to its input (col2im crashes when differentiated again)",
	"*gorgonia.maxPoolDiffOp":   "MaxPool2D (its derivative op panics when differentiated again)",
	"gorgonia.maxPoolDiffOp":    "MaxPool2D (its derivative op panics when differentiated again)",
	"*gorgonia.softmaxDiffOp":   "SoftMax/LogSoftMax (its derivative op panics when differentiated again)",
	"gorgonia.softmaxDiffOp":    "SoftMax/LogSoftMax (its derivative op panics when differentiated again)",
	"*gorgonia.sliceIncrOp":     "Slice (its gradient op routes the second-order gradient to the wrong input)",
	"gorgonia.sliceIncrOp":      "Slice (its gradient op routes the second-order gradient to the wrong input)",
	"*gorgonia.batchnormDiffOp": "BatchNorm (its backward op marks every input non-differentiable: wrong values)",
}

// brokenAlways names ops whose first derivative is already wrong in
// gorgonia v0.9.18, so no Grad may pass through them.
var brokenAlways = map[string]string{
	"*gorgonia.avgPoolOp": "AveragePool2D (its gradient is wrong and its derivative panics)",
	"gorgonia.avgPoolOp":  "AveragePool2D (its gradient is wrong and its derivative panics)",
	"invSqrt":             "InverseSqrt (its gradient is wrong)",
}

// diffWRT returns op's DiffWRT flags for n inputs, all true for an op in the
// refusal tables, and an error instead of a panic or a short slice.
func diffWRT(op gorgonia.SDOp, n int) (diff []bool, err error) {
	if brokenReason(op, true) != "" {
		diff = make([]bool, n)
		for i := range diff {
			diff[i] = true
		}
		return diff, nil
	}
	defer func() {
		if r := recover(); r != nil {
			diff, err = nil, fmt.Errorf("DiffWRT(%d) panicked: %v", n, r)
		}
	}()
	if diff = op.DiffWRT(n); len(diff) != n {
		return nil, fmt.Errorf("DiffWRT(%d) returned %d flags", n, len(diff))
	}
	return diff, nil
}

// brokenReason reports why op cannot be differentiated here, or "" if it can.
func brokenReason(op gorgonia.Op, nested bool) string {
	key := reflect.TypeOf(op).String()
	if r, ok := brokenAlways[key]; ok {
		return r
	}
	if r, ok := brokenAlways[op.String()]; ok {
		return r
	}
	if nested {
		return brokenWhenNested[key]
	}
	return ""
}

// UnsupportedOpError reports an op that Grad refuses to differentiate through
// because gorgonia's derivative of it is known to crash or be wrong.
type UnsupportedOpError struct {
	Node   *gorgonia.Node
	Reason string
	Nested bool
}

func (e *UnsupportedOpError) Error() string {
	kind := "differentiate"
	if e.Nested {
		kind = "differentiate a second time"
	}
	return fmt.Sprintf("graph: cannot %s through op %v of node %q: %s", kind, e.Node.Op(), e.Node.Name(), e.Reason)
}

// Grad returns the gradients of the scalar cost with respect to each node of
// wrt, adding the nodes that compute them to the graph. It is exact when
// nested: the cost may itself depend on gradients computed by an earlier Grad
// (as in MAML's unrolled inner loop), and every second-order term is kept.
// Edges into StopGradient nodes (and other inputs an op declares
// non-differentiable) carry no gradient.
func (g *Graph) Grad(cost *gorgonia.Node, wrt ...*gorgonia.Node) (gorgonia.Nodes, error) {
	if !cost.IsScalar() {
		return nil, fmt.Errorf("graph: Grad needs a scalar cost, %q has shape %v", cost.Name(), cost.Shape())
	}
	firstNew := g.nextID()
	order := g.postOrder(cost)

	wrtSet := make(map[*gorgonia.Node]bool, len(wrt))
	for _, w := range wrt {
		wrtSet[w] = true
	}
	// depends[n]: n is differentiably influenced by some node of wrt. Ops in
	// the refusal tables count every input as differentiable here: some of
	// them panic in DiffWRT (softmaxDiffOp), return too few flags
	// (maxPoolDiffOp) or hide a real dependence (batchnormDiffOp), and being
	// conservative guarantees the sweep reaches them and refuses them.
	// An op without SymDiff (e.g. gorgonia's sparsemax or clamp derivative
	// ops) that takes a dependent input is "opaque": it counts as dependent,
	// so that reaching it on a differentiable path is an error rather than a
	// silently missing term.
	depends := make(map[*gorgonia.Node]bool, len(order))
	diffs := make(map[*gorgonia.Node][]bool, len(order))
	opaque := make(map[*gorgonia.Node]bool)
	for _, n := range order {
		op, ok := n.Op().(gorgonia.SDOp)
		if !ok {
			depends[n] = wrtSet[n]
			for _, c := range g.children(n) {
				if depends[c] {
					depends[n], opaque[n] = true, true
				}
			}
			continue
		}
		children := g.children(n)
		diff, err := diffWRT(op, len(children))
		if err != nil {
			return nil, fmt.Errorf("graph: op %v of node %q: %w", n.Op(), n.Name(), err)
		}
		diffs[n] = diff
		depends[n] = wrtSet[n]
		for i, c := range children {
			if diff[i] && depends[c] {
				depends[n] = true
				break
			}
		}
	}
	// The sweep is nested when a node made by an earlier Grad lies on a
	// differentiable path from wrt to cost (a gradient behind StopGradient
	// does not count: first-order MAML differentiates only once).
	onPath := map[*gorgonia.Node]bool{cost: depends[cost]}
	nested := false
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if !onPath[n] {
			continue
		}
		if opaque[n] {
			return nil, fmt.Errorf("graph: op %v of node %q has no symbolic derivative, and the cost depends on %v through it", n.Op(), n.Name(), wrt)
		}
		if g.gradientNodes[n.ID()] {
			nested = true
		}
		for j, c := range g.children(n) {
			if diffs[n] != nil && diffs[n][j] && depends[c] {
				onPath[c] = true
			}
		}
	}

	one, err := g.unitLike(cost)
	if err != nil {
		return nil, err
	}
	terms := map[*gorgonia.Node]gorgonia.Nodes{cost: {one}}
	sums := make(map[*gorgonia.Node]*gorgonia.Node, len(wrt))
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		if !depends[n] || len(terms[n]) == 0 {
			continue
		}
		grad := terms[n][0]
		if len(terms[n]) > 1 {
			if grad, err = sumTerms(terms[n]); err != nil {
				return nil, fmt.Errorf("graph: summing the gradient terms of %q: %w", n.Name(), err)
			}
		}
		if wrtSet[n] {
			sums[n] = grad
		}
		if n.Op() == nil {
			continue
		}
		op := n.Op().(gorgonia.SDOp) // opaque ops were refused above
		if reason := brokenReason(n.Op(), nested); reason != "" {
			return nil, &UnsupportedOpError{Node: n, Reason: reason, Nested: nested}
		}
		children := g.children(n)
		childGrads, err := op.SymDiff(children, n, grad)
		if err != nil {
			return nil, fmt.Errorf("graph: differentiating op %v of node %q: %w", n.Op(), n.Name(), err)
		}
		diff := diffs[n]
		for j, c := range children {
			if diff[j] && depends[c] {
				terms[c] = append(terms[c], childGrads[j])
			}
		}
	}

	out := make(gorgonia.Nodes, len(wrt))
	for i, w := range wrt {
		if out[i] = sums[w]; out[i] == nil {
			return nil, fmt.Errorf("graph: cost %q does not depend differentiably on %q", cost.Name(), w.Name())
		}
	}
	for _, n := range g.AllNodes() {
		if n.ID() >= firstNew {
			g.gradientNodes[n.ID()] = true
		}
	}
	return out, nil
}

// nextID is the id the graph will give its next new node.
func (g *Graph) nextID() int64 {
	all := g.AllNodes()
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1].ID() + 1
}

// children returns the inputs of n in argument order.
func (g *Graph) children(n *gorgonia.Node) gorgonia.Nodes { return exec.Inputs(g.ExprGraph, n) }

// postOrder lists the nodes cost depends on, every node after its inputs.
func (g *Graph) postOrder(cost *gorgonia.Node) gorgonia.Nodes {
	return exec.PostOrder(g.ExprGraph, cost)
}

// unitLike returns the constant 1 of cost's dtype, the seed of the sweep.
func (g *Graph) unitLike(cost *gorgonia.Node) (*gorgonia.Node, error) {
	switch cost.Dtype() {
	case gorgonia.Float64:
		return g.Constant(gorgonia.NewF64(1)), nil
	case gorgonia.Float32:
		return g.Constant(gorgonia.NewF32(1)), nil
	}
	return nil, fmt.Errorf("graph: Grad needs a float cost, %q is %v", cost.Name(), cost.Dtype())
}
