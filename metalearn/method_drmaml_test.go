package metalearn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDRMAMLTailBruteForce: on fixed losses with ties, DR-MAML's weights are
// 1/k on k = ceil(B(1-alpha)) instances whose losses sum to the largest sum
// of any k of them (all subsets enumerated), and 0 elsewhere.
func TestDRMAMLTailBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		b := 1 + rng.IntN(10)
		alpha := []float64{0.1, 0.3, 0.5, 0.7, 0.9}[trial%5]
		losses := make([]float64, b)
		for i := range losses {
			losses[i] = float64(rng.IntN(4)) // ties
		}
		m := DRMAML{Alpha: alpha}.New().(Weigher)
		if _, err := m.Init([]float64{1, 1}, b); err != nil {
			t.Fatal(err)
		}
		weights := make([]float64, b)
		m.Weigh(nil, nil, losses, weights)
		k := int(math.Ceil(float64(b) * (1 - alpha) * (1 - 1e-12)))
		k = max(k, 1)
		got, n := 0.0, 0
		for i, w := range weights {
			switch w {
			case 0:
			case 1 / float64(k):
				got += losses[i]
				n++
			default:
				t.Fatalf("B=%d alpha=%v: weight %v, want 0 or 1/%d", b, alpha, w, k)
			}
		}
		best := math.Inf(-1)
		for set := range 1 << b {
			if popcount(set) != k {
				continue
			}
			s := 0.0
			for i := range b {
				if set&(1<<i) != 0 {
					s += losses[i]
				}
			}
			best = math.Max(best, s)
		}
		if n != k || got != best {
			t.Fatalf("B=%d alpha=%v losses %v: %d weighted with sum %v, want %d with the largest sum %v", b, alpha, losses, n, got, k, best)
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestTailSizes: the tail and the default candidate batch, with 1-alpha not
// exact in binary; a candidate batch below the meta-batch is refused.
func TestTailSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b     int
		alpha float64
		want  int
	}{{100, 0.7, 30}, {100, 0.5, 50}, {10, 0.75, 3}, {3, 0.99, 1}, {164, 0.7, 50}, {163, 0.7, 49}, {7, 0.1, 7}} {
		if got := tailSize(c.b, c.alpha); got != c.want {
			t.Errorf("tailSize(%d, %v) = %d, want %d", c.b, c.alpha, got, c.want)
		}
	}
	for _, c := range []struct {
		candidates int
		alpha      float64
		batch      int
		want       int
	}{{0, 0.7, 50, 164}, {0, 0.7, 25, 81}, {0, 0.5, 25, 49}, {0, 0.5, 8, 15}, {60, 0.7, 50, 60}, {50, 0.7, 50, 50}} {
		got, err := DrawnBatch(DRMAML{Alpha: c.alpha, Candidates: c.candidates}, c.batch)
		if err != nil || got != c.want {
			t.Errorf("candidates %d alpha %v batch %d: got %d, %v, want %d", c.candidates, c.alpha, c.batch, got, err, c.want)
		}
		if got, _ := DrawnBatch(DRMAMLPlus{Alpha: c.alpha, Candidates: c.candidates}, c.batch); got != c.want {
			t.Errorf("DR-MAML+: candidates %d alpha %v batch %d: got %d, want %d", c.candidates, c.alpha, c.batch, got, c.want)
		}
	}
	_, err := DrawnBatch(DRMAML{Alpha: 0.5, Candidates: 40}, 50)
	var se SettingError
	if !errors.As(err, &se) || se.Key != "candidates" {
		t.Errorf("candidates 40 < batch 50: got %v, want a SettingError on candidates", err)
	}
	// An alpha close to 1 or a huge candidates would adapt more instances
	// than memory holds (and alpha = 1 - 1e-15 would search B for ages).
	for _, c := range []struct {
		candidates int
		alpha      float64
		batch      int
		key        string
	}{{0, 0.99999, 50, "alpha"}, {0, 1 - 1e-15, 50, "alpha"}, {0, 0.999, 11, "alpha"}, {MaxCandidates + 1, 0.7, 50, "candidates"}} {
		_, err := DrawnBatch(DRMAMLPlus{Alpha: c.alpha, Candidates: c.candidates}, c.batch)
		if !errors.As(err, &se) || se.Key != c.key {
			t.Errorf("candidates %d alpha %v batch %d: got %v, want a SettingError on %s", c.candidates, c.alpha, c.batch, err, c.key)
		}
	}
	if got, err := DrawnBatch(DRMAML{Alpha: 0.999}, 10); got != 9001 || err != nil {
		t.Errorf("alpha 0.999 batch 10: got %d, %v, want 9001 (tail ceil(9.001) = 10)", got, err)
	}
	if got, _ := DrawnBatch(TRMAML{}, 25); got != 25 {
		t.Errorf("TR-MAML draws %d, want the meta-batch 25", got)
	}
}

// TestTailMethodSettings: alpha outside (0, 1) and negative candidates are
// refused naming the key.
func TestTailMethodSettings(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"drmaml", "drmaml_plus"} {
		info, _ := LookupMethod(name)
		for _, c := range []struct {
			alpha      float64
			candidates int
			keys       []string
		}{{0.7, 0, nil}, {0, 0, []string{"alpha"}}, {1, 10, []string{"alpha"}}, {math.NaN(), 0, []string{"alpha"}}, {0.5, -1, []string{"candidates"}}} {
			m := info.New()
			switch d := m.(type) {
			case *DRMAML:
				d.Alpha, d.Candidates = c.alpha, c.candidates
			case *DRMAMLPlus:
				d.Alpha, d.Candidates = c.alpha, c.candidates
			}
			errs := info.Check(m)
			if len(errs) != len(c.keys) {
				t.Errorf("%s alpha %v candidates %d: %v, want errors on %v", name, c.alpha, c.candidates, errs, c.keys)
				continue
			}
			for i, e := range errs {
				if e.Key != c.keys[i] {
					t.Errorf("%s: error on %q, want %q", name, e.Key, c.keys[i])
				}
			}
		}
	}
}
