package metalearn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDROMAMLWeightsFormula: q moves to q_i exp(eta (lbar_i + A/sqrt(m_i)))
// / Z, with lbar_i the batch mean loss of task i (0 when not drawn), and
// instance k of task i weighs q_i / c_i; huge losses stay finite.
func TestDROMAMLWeightsFormula(t *testing.T) {
	t.Parallel()
	masses := []float64{1, 4, 9}
	m := DROMAML{EtaQ: 0.3, Adjustment: 0.5}.New().(Weigher)
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
	if _, err := (DROMAML{EtaQ: -1}.New()).Init(masses, 5); err == nil {
		t.Error("eta_q < 0 accepted")
	}
}

// TestDROMAMLEstimator measures how Group DRO's weights (q_i / c_i on the
// drawn tasks) differ from the weights (n/C) q_i of Algorithm 1's sampling,
// which entropic TR-MAML uses, as estimates of sum_i q_i grad F_i at a
// fixed (w, q) of the quadratic tasks, tasks drawn uniformly: Algorithm 1's
// is unbiased; Group DRO's expectation is that sum scaled by the chance
// 1 - (1 - 1/n)^C that a task is drawn at all (the same for every task, so
// the direction is unbiased), and its spread is smaller. The measured
// means and standard deviations are logged (go test -v).
func TestDROMAMLEstimator(t *testing.T) {
	t.Parallel()
	q, alpha := newQuad()
	p := []float64{0.573, 0.001, 0.426}
	grad := func(i int) float64 { return 2 * q.k(i, alpha) * (0 - q.c[i]) }
	target := 0.0
	for i := range p {
		target += p[i] * grad(i)
	}
	const draws = 100000
	for _, c := range []int{2, 5, 25} {
		rng := rand.New(rand.NewPCG(11, uint64(c)))
		var s, ss [2]float64
		tasks, count := make([]int, c), make([]int, 3)
		for range draws {
			clear(count)
			for k := range tasks {
				tasks[k] = rng.IntN(3)
				count[tasks[k]]++
			}
			var g [2]float64
			for _, i := range tasks {
				g[0] += 3 / float64(c) * p[i] * grad(i)
				g[1] += p[i] / float64(count[i]) * grad(i)
			}
			for e := range g {
				s[e] += g[e]
				ss[e] += g[e] * g[e]
			}
		}
		var mean, sd [2]float64
		for e := range s {
			mean[e] = s[e] / draws
			sd[e] = math.Sqrt(ss[e]/draws - mean[e]*mean[e])
		}
		scale := 1 - math.Pow(2.0/3, float64(c))
		t.Logf("C=%2d: target %.4f; Algorithm 1's weights: mean %.4f sd %.4f; Group DRO's: mean %.4f (= %.3f x target) sd %.4f",
			c, target, mean[0], sd[0], mean[1], mean[1]/target, sd[1])
		if math.Abs(mean[0]-target) > 4*sd[0]/math.Sqrt(draws) {
			t.Errorf("C=%d: Algorithm 1's estimate has mean %v, want %v", c, mean[0], target)
		}
		if math.Abs(mean[1]-scale*target) > 4*sd[1]/math.Sqrt(draws)+1e-12 {
			t.Errorf("C=%d: Group DRO's estimate has mean %v, want %v x %v", c, mean[1], scale, target)
		}
		if !(sd[1] < sd[0]) {
			t.Errorf("C=%d: Group DRO's spread %v not below Algorithm 1's %v", c, sd[1], sd[0])
		}
	}
}
