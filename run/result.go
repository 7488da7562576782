package run

import (
	"encoding/json"

	"github.com/trmaml/trmaml/metalearn"
)

// UnmarshalJSON reads a Result, naming the metric "mse" when the file has
// none (result.json from before the field).
func (r *Result) UnmarshalJSON(data []byte) error {
	type plain Result
	if err := json.Unmarshal(data, (*plain)(r)); err != nil {
		return err
	}
	if r.Metric == "" {
		r.Metric = metalearn.MSE.Name
	}
	return nil
}

// UnmarshalJSON reads Stats, giving every task mass 1 when masses is absent
// (run directories from before the field).
func (s *Stats) UnmarshalJSON(data []byte) error {
	type plain Stats
	if err := json.Unmarshal(data, (*plain)(s)); err != nil {
		return err
	}
	if s.Masses == nil {
		s.Masses = make([]float64, len(s.Tasks))
		for i := range s.Masses {
			s.Masses[i] = 1
		}
	}
	return nil
}

// masses returns the TaskSet.Mass of every task of set.
func masses(set metalearn.TaskSet) []float64 {
	m := make([]float64, set.Len())
	for i := range m {
		m[i] = set.Mass(i)
	}
	return m
}
