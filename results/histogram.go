package results

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// Histogram counts the final per-task values of one task set of several
// groups in shared bins.
type Histogram struct {
	// Edges are the bin edges, len(Counts[g])+1 of them, in stored units
	// (accuracy as a fraction): for a loss from 0 to the largest task loss
	// of any run, for a score from the multiple of 0.05 at or below the
	// smallest task score to the one at or above the largest (not 1:
	// the bins span the data).
	Edges []float64
	// Counts[g][b] is the number of tasks whose final value falls in bin b
	// ([Edges[b], Edges[b+1]), the last bin closed), averaged over the
	// seeds of groups[g].
	Counts [][]float64
}

// TaskHistogram bins the final per-task values on set of every run of
// groups (all in one metric, that of groups[0]) into bins equal bins
// (bins >= 1).
func TaskHistogram(groups []*Group, set Set, bins int) Histogram {
	lo, hi := 0.0, 0.0
	if groups[0].Score.HigherIsBetter {
		lo, hi = 1.0, 0.0
		for _, g := range groups {
			for _, r := range g.Runs {
				lo = min(lo, floats.Min(set.of(&r.Result).PerTask))
				hi = max(hi, floats.Max(set.of(&r.Result).PerTask))
			}
		}
		lo, hi = math.Floor(lo*20)/20, min(math.Ceil(hi*20)/20, 1)
		if lo >= hi {
			lo = hi - 0.05
		}
	} else {
		for _, g := range groups {
			for _, r := range g.Runs {
				hi = max(hi, floats.Max(set.of(&r.Result).PerTask))
			}
		}
		if hi <= 0 {
			hi = 1
		}
	}
	h := Histogram{Edges: make([]float64, bins+1), Counts: make([][]float64, len(groups))}
	floats.Span(h.Edges, lo, hi)
	for gi, g := range groups {
		h.Counts[gi] = make([]float64, bins)
		for _, r := range g.Runs {
			for _, v := range set.of(&r.Result).PerTask {
				h.Counts[gi][h.bin(v)] += 1 / float64(len(g.Runs))
			}
		}
	}
	return h
}

// bin is the index of the bin holding v, found by comparing with the edges
// themselves so that a value equal to an edge starts that edge's bin
// whatever the rounding of the bin width; values outside go to the end bins.
func (h Histogram) bin(v float64) int {
	i, exact := slices.BinarySearch(h.Edges, v)
	if !exact {
		i--
	}
	return min(max(i, 0), len(h.Edges)-2)
}
