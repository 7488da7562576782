package metalearn

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// ProjectSimplex writes into dst the Euclidean projection of q onto the
// probability simplex {p : p_i >= 0, sum_i p_i = 1}, the exact O(n log n)
// algorithm of Wang and Carreira-Perpinan (2013) that TR-MAML's update of p
// uses. scratch must have len(q) elements; dst may alias q.
func ProjectSimplex(dst, q, scratch []float64) {
	u := scratch[:len(q)]
	copy(u, q)
	slices.Sort(u)
	slices.Reverse(u)
	// The largest rho with u_rho + (1 - sum_{i<=rho} u_i)/rho > 0 fixes the shift.
	sum, shift := 0.0, 0.0
	for j, v := range u {
		sum += v
		if s := (1 - sum) / float64(j+1); v+s > 0 {
			shift = s
		}
	}
	for i, v := range q {
		dst[i] = math.Max(v+shift, 0)
	}
}

// ProjectBall scales w onto the Euclidean ball of the given radius if it lies
// outside it: the projection Pi_W of Algorithm 1 for W = {w : ||w|| <= R}.
// A radius of 0 means no constraint.
func ProjectBall(w []float64, radius float64) {
	if radius <= 0 {
		return
	}
	if n := floats.Norm(w, 2); n > radius {
		floats.Scale(radius/n, w)
	}
}
