package metalearn

import (
	"math"
	"slices"
	"sort"
)

// ProjectCappedSimplex writes into dst the Euclidean projection of q onto the
// capped simplex {p : 0 <= p_i <= upper, sum_i p_i = 1}, the feasible set of
// CVaR's p (upper = 1/(a n)). It needs len(scratch) >= 3 len(q); dst may
// alias q. With upper >= 1 the cap is inactive and it is ProjectSimplex; with
// upper <= 1/n the uniform distribution is the only (or the nearest) point.
//
// The projection is p_i = clip(q_i - t, 0, upper) with the threshold t
// where s(t) = sum_i clip(q_i - t, 0, upper) = 1. s is continuous,
// non-increasing and linear between the breakpoints q_i - upper and q_i, so
// a binary search over the sorted breakpoints, each probe evaluating s
// exactly in O(n), finds the piece that holds t, and t follows in closed
// form from the entries in the piece's middle: O(n log n) in all. The
// entries are shifted by their maximum first, so entries near the top are
// differenced exactly even when they are huge (>= 2^53).
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
	top := slices.Max(q)
	z := scratch[:n]
	for i, v := range q {
		z[i] = v - top
	}
	slices.Sort(z)
	// Breakpoints, ascending: a merge of z_i - upper and z_i.
	b := scratch[n : 3*n]
	for k, lo, hi := 0, 0, 0; k < 2*n; k++ {
		if lo < n && z[lo]-upper <= z[hi] {
			b[k] = z[lo] - upper
			lo++
		} else {
			b[k] = z[hi]
			hi++
		}
	}
	s := func(t float64) float64 {
		sum := 0.0
		for _, v := range z {
			sum += math.Min(math.Max(v-t, 0), upper)
		}
		return sum
	}
	// s(b[0]) = n upper > 1 and s(b[2n-1]) = s(0) = 0: the first
	// breakpoint with s <= 1 closes the piece that holds t.
	j := sort.Search(2*n, func(k int) bool { return s(b[k]) <= 1 })
	left, right := b[max(j-1, 0)], b[j]
	// On (left, right) every entry is capped (z - upper >= right), zero
	// (z <= left) or in the middle, where s is linear in t.
	caps, mid, sumMid := 0, 0, 0.0
	for _, v := range z {
		switch {
		case v-upper >= right:
			caps++
		case v > left:
			mid++
			sumMid += v
		}
	}
	t := right
	if mid > 0 {
		t = math.Min(math.Max((float64(caps)*upper+sumMid-1)/float64(mid), left), right)
	}
	for i, v := range q {
		dst[i] = math.Min(math.Max((v-top)-t, 0), upper)
	}
}
