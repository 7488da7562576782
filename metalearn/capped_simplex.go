package metalearn

import (
	"math"
	"slices"
	"sort"
)

// ProjectCappedSimplex writes into dst the Euclidean projection of q onto the
// capped simplex {p : 0 <= p_i <= upper, sum_i p_i = 1}, the feasible set of
// CVaR's p (upper = 1/(a n)). It needs len(scratch) >= len(q); dst may alias
// q. With upper >= 1 the cap is inactive and it is ProjectSimplex; with
// upper <= 1/n the uniform distribution is the only (or the nearest) point.
//
// The projection is p_i = clip(q_i - t, 0, upper) for one threshold t: with
// q sorted in decreasing order, the first c entries are capped, the next m
// lie strictly between the bounds and the rest are zero. For a given c, the
// entries after the first c are projected onto {sum = 1 - c upper} without
// a cap by the simplex algorithm of Wang and Carreira-Perpinan (O(n)); c is
// right when that leaves the (c+1)-th entry at most upper (more caps are not
// needed) and the c-th entry at least upper above t. The first condition is
// monotone in c, so a binary search finds c: O(n log n) in all. Each
// candidate is computed relative to its first uncapped entry q_r (t = q_r +
// tau): the entries between the bounds lie within upper of t, so their
// differences q_i - q_r are exact whatever the scale of q (entries >= 2^53
// beside small ones included), and so are their p_i = (q_i - q_r) - tau.
func ProjectCappedSimplex(dst, q []float64, upper float64, scratch []float64) {
	n := len(q)
	if upper >= 1 {
		ProjectSimplex(dst, q, scratch[:n])
		return
	}
	if float64(n)*upper <= 1 {
		for i := range dst[:n] {
			dst[i] = 1 / float64(n)
		}
		return
	}
	x := scratch[:n]
	copy(x, q)
	slices.Sort(x)
	slices.Reverse(x)
	// tau returns t - x[c] for c capped entries (c*upper < 1, c < n).
	tau := func(c int) float64 {
		rem, ref := 1-float64(c)*upper, x[c]
		sum, t := 0.0, -rem
		for m, v := range x[c:] {
			sum += v - ref
			if s := (sum - rem) / float64(m+1); v-ref-s > 0 {
				t = s
			}
		}
		return t
	}
	// The largest c with c*upper < 1 (and c < n).
	cmax := min(n-1, int(math.Ceil(1/upper))-1)
	for cmax > 0 && float64(cmax)*upper >= 1 {
		cmax--
	}
	c := sort.Search(cmax, func(c int) bool { return -tau(c) <= upper })
	ref, t := x[c], tau(c)
	for i, v := range q {
		dst[i] = math.Min(math.Max((v-ref)-t, 0), upper)
	}
}
