package run

import "github.com/trmaml/trmaml/metalearn"

// masses returns the TaskSet.Mass of every task of set.
func masses(set metalearn.TaskSet) []float64 {
	m := make([]float64, set.Len())
	for i := range m {
		m[i] = set.Mass(i)
	}
	return m
}
