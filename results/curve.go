package results

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Curve is a statistic at each evaluation iteration, estimated over seeds.
type Curve struct {
	// Iterations are the evaluation iterations at which at least one seed
	// has a value, increasing.
	Iterations []float64
	// Seconds is the mean elapsed wall-clock time at each iteration over
	// the same seeds.
	Seconds []float64
	// Points are the estimates at each iteration.
	Points []Estimate
	// Seeds[s][i] is the value of the group's run s at Iterations[i], NaN
	// where that run has none: with few seeds, figures draw these
	// rather than a t interval.
	Seeds [][]float64
}

// curve estimates value(r, row) over g's runs at each iteration; rows
// where value is NaN are left out.
func (g *Group) curve(value func(r *Run, row int) float64) Curve {
	var its []int
	for _, r := range g.Runs {
		its = append(its, r.Iterations...)
	}
	slices.Sort(its)
	its = slices.Compact(its)
	c := Curve{Seeds: make([][]float64, len(g.Runs))}
	for _, it := range its {
		var vals, secs []float64
		seed := make([]float64, len(g.Runs))
		for s, r := range g.Runs {
			seed[s] = math.NaN()
			row, ok := slices.BinarySearch(r.Iterations, it)
			if !ok {
				continue
			}
			if v := value(r, row); !math.IsNaN(v) {
				vals = append(vals, v)
				secs = append(secs, r.metrics[Elapsed][row])
				seed[s] = v
			}
		}
		if len(vals) == 0 {
			continue
		}
		c.Iterations = append(c.Iterations, float64(it))
		c.Seconds = append(c.Seconds, stat.Mean(secs, nil))
		c.Points = append(c.Points, Summarize(vals))
		for s, v := range seed {
			c.Seeds[s] = append(c.Seeds[s], v)
		}
	}
	return c
}

// Curve returns metrics.csv column c estimated over the group's seeds at
// each evaluation iteration (for the batch columns, the iteration-0 row,
// which has none, is left out).
func (g *Group) Curve(c Column) Curve {
	return g.curve(func(r *Run, row int) float64 { return r.metrics[c][row] })
}

// PMass returns the total task weight p on the tasks named in set at each
// evaluation iteration, estimated over the group's seeds.
func (g *Group) PMass(set []string) Curve {
	return g.curve(func(r *Run, row int) float64 {
		total := 0.0
		for i, task := range r.P.Tasks {
			if slices.Contains(set, task) {
				total += r.P.Weights[row][i]
			}
		}
		return total
	})
}
