package metalearn

import (
	"math"
	"testing"
)

// TestDROMAMLWeightsFormula: q moves to q_i exp(eta (lbar_i + A/sqrt(m_i)))
// / Z, with lbar_i the batch mean loss of task i (0 when not drawn), and
// instance k of task i weighs q_i / c_i; huge losses stay finite.
func TestDROMAMLWeightsFormula(t *testing.T) {
	t.Parallel()
	masses := []float64{1, 4, 9}
	m := &DROMAML{EtaQ: 0.3, Adjustment: 0.5}
	p, err := m.Init(masses, 5)
	if err != nil {
		t.Fatal(err)
	}
	tasks := []int{0, 2, 2, 0, 0}
	losses := []float64{1, 2, 4, 0.5, 3}
	lbar := []float64{(1 + 0.5 + 3) / 3, 0, (2 + 4) / 2.0}
	count := []float64{3, 0, 2}
	q := make([]float64, 3)
	z := 0.0
	for i := range q {
		q[i] = (1.0 / 3) * math.Exp(0.3*(lbar[i]+0.5/math.Sqrt(masses[i])))
		z += q[i]
	}
	for i := range q {
		q[i] /= z
	}
	w := make([]float64, 5)
	m.Weigh(p, tasks, losses, w)
	for i := range q {
		if math.Abs(p[i]-q[i]) > 1e-15 {
			t.Errorf("q[%d] = %v, want %v", i, p[i], q[i])
		}
	}
	for k, i := range tasks {
		if want := q[i] / count[i]; math.Abs(w[k]-want) > 1e-15 {
			t.Errorf("weight[%d] = %v, want q_%d / %v = %v", k, w[k], i, count[i], want)
		}
	}
	m.Weigh(p, []int{1, 1, 1, 1, 1}, []float64{1e5, 1e5, 1e5, 1e5, 1e5}, w)
	if err := m.Check("q", p); err != nil || p[1] < 1-1e-12 {
		t.Errorf("after huge losses: q = %v, %v", p, err)
	}
	if _, err := (&DROMAML{EtaQ: -1}).Init(masses, 5); err == nil {
		t.Error("eta_q < 0 accepted")
	}
}
