package graph

import (
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The compositions that exist only in the exported API (layers.go,
// inner.go) join the op table, so TestOpsNestedFiniteDifferences and
// TestOpsFloat32 check their values and their first and second derivatives
// like every op of the package.
func init() {
	opRows = append(opRows,
		opRow{name: "BatchNorm", in: []tensor.Shape{{2, 6, 3}, {2, 3}, {2, 3}},
			build: func(in gorgonia.Nodes) (*gorgonia.Node, error) { return BatchNorm(in[0], in[1], in[2], 1e-3) },
			value: func(in [][]float64) []float64 { return naiveBatchNorm(in[0], in[1], in[2], 2, 6, 3, 1e-3) }},
		opRow{name: "ScaledStep, a step size per parameter", in: []tensor.Shape{{2, 3, 2}, {2, 3, 2}, {3, 2}},
			build: scaledStepRow,
			value: func(in [][]float64) []float64 { return naiveScaledStep(in[0], in[1], in[2]) }},
		opRow{name: "ScaledStep, a step size per tensor", in: []tensor.Shape{{2, 3, 2}, {2, 3, 2}, {1}},
			build: scaledStepRow,
			value: func(in [][]float64) []float64 { return naiveScaledStep(in[0], in[1], in[2]) }},
	)
}

func scaledStepRow(in gorgonia.Nodes) (*gorgonia.Node, error) {
	next, err := ScaledStep(in[:1], in[1:2], in[2:])
	if err != nil {
		return nil, err
	}
	return next[0], nil
}

// naiveScaledStep is theta - rate*grad with rate repeated over the tasks
// (and over the parameters if it holds one value).
func naiveScaledStep(theta, grad, rate []float64) []float64 {
	out := make([]float64, len(theta))
	for i := range out {
		out[i] = theta[i] - rate[i%len(rate)]*grad[i]
	}
	return out
}
