package metalearn

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// ProjectSimplex writes into dst the Euclidean projection of q onto the
// probability simplex {p : p_i >= 0, sum_i p_i = 1}, the exact O(n log n)
// algorithm of Wang and Carreira-Perpinan (2013) that TR-MAML's update of p
// uses. It is correct for all finite q: entries beyond +-2^20 (where
// v + (1 - v) would round to 0, or sums overflow) are handled on q - max(q)
// with entries below -2 clamped, which has the same projection since
// P(q + c1) = P(q) and an entry more than 1 below the largest projects to 0.
// scratch must have len(q) elements; dst may alias q.
func ProjectSimplex(dst, q, scratch []float64) {
	if len(q) == 0 {
		return
	}
	hi, lo := slices.Max(q), slices.Min(q)
	shifted := hi > moderate || hi < -moderate || lo < -moderate
	at := func(v float64) float64 {
		if !shifted {
			return v
		}
		return math.Max(v-hi, -2) // exact for v in [hi-2, hi] with |hi| >= 4 (Sterbenz)
	}
	u := scratch[:len(q)]
	for i, v := range q {
		u[i] = at(v)
	}
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
		dst[i] = math.Max(at(v)+shift, 0)
	}
}

// moderate bounds the entries ProjectSimplex uses as they are: within it,
// the arithmetic is exact enough and cannot overflow for any realistic n.
const moderate = 1 << 20

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
