package sinusoid

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

// paperSpec is the sinusoid setting of the TR-MAML paper.
func paperSpec() Spec {
	return Spec{
		PhaseMax: math.Pi, XMin: -5, XMax: 5, TaskWidth: 0.01,
		TestAmplitudes:  [2]float64{0.1, 5},
		TrainAmplitudes: [][2]float64{{0.1, 1.05}, {4.95, 5}},
	}
}

func TestNewSinusoidCounts(t *testing.T) {
	t.Parallel()
	coarse := paperSpec()
	coarse.TaskWidth = 0.05
	overlap := paperSpec()
	overlap.TrainAmplitudes = [][2]float64{{1, 2}, {1.5, 2.5}, {4.999, 5}}

	tests := []struct {
		name       string
		spec       Spec
		train      int
		test       int
		perRange   [][2]float64 // ranges to count train tasks in
		rangeCount []int
		firstName  string
		lastName   string // of the train set
	}{
		{
			name: "paper", spec: paperSpec(), train: 100, test: 490,
			perRange:   [][2]float64{{0.1, 1.05}, {4.95, 5}},
			rangeCount: []int{95, 5},
			firstName:  "amplitude [0.10,0.11)", lastName: "amplitude [4.99,5.00)",
		},
		{
			name: "coarse", spec: coarse, train: 20, test: 98,
			perRange:   [][2]float64{{0.1, 1.05}, {4.95, 5}},
			rangeCount: []int{19, 1},
			firstName:  "amplitude [0.10,0.15)", lastName: "amplitude [4.95,5.00)",
		},
		{
			// Overlapping ranges count a task once; [4.999,5] holds no task.
			name: "overlap", spec: overlap, train: 150, test: 490,
			perRange:   [][2]float64{{1, 2.5}},
			rangeCount: []int{150},
			firstName:  "amplitude [1.00,1.01)", lastName: "amplitude [2.49,2.50)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, test, err := New(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if train.Len() != tc.train || test.Len() != tc.test {
				t.Fatalf("got %d train and %d test tasks, want %d and %d", train.Len(), test.Len(), tc.train, tc.test)
			}
			for k, r := range tc.perRange {
				n := 0
				for i := range train.Len() {
					lo, hi := train.Interval(i)
					if lo >= r[0]-1e-12 && hi <= r[1]+1e-12 {
						n++
					}
				}
				if n != tc.rangeCount[k] {
					t.Errorf("%d train tasks in %v, want %d", n, r, tc.rangeCount[k])
				}
			}
			if got := train.Name(0); got != tc.firstName {
				t.Errorf("train.Name(0) = %q, want %q", got, tc.firstName)
			}
			if got := train.Name(train.Len() - 1); got != tc.lastName {
				t.Errorf("last train name = %q, want %q", got, tc.lastName)
			}

			// The test tasks tile the test amplitudes contiguously.
			lo, _ := test.Interval(0)
			_, hi := test.Interval(test.Len() - 1)
			if lo != tc.spec.TestAmplitudes[0] || hi != tc.spec.TestAmplitudes[1] {
				t.Errorf("test tasks cover [%v, %v), want %v", lo, hi, tc.spec.TestAmplitudes)
			}
			for i := 1; i < test.Len(); i++ {
				_, prevHi := test.Interval(i - 1)
				lo, hi := test.Interval(i)
				if lo != prevHi || math.Abs(hi-lo-tc.spec.TaskWidth) > 1e-12 {
					t.Fatalf("test task %d is [%v, %v), previous ends at %v", i, lo, hi, prevHi)
				}
			}
			// Every train task is a test task, in the same order, with unit mass.
			var names []string
			for i := range test.Len() {
				names = append(names, test.Name(i))
			}
			for i := range train.Len() {
				if !slices.Contains(names, train.Name(i)) {
					t.Errorf("train task %q is not a test task", train.Name(i))
				}
				if train.Mass(i) != 1 {
					t.Errorf("train.Mass(%d) = %v, want 1", i, train.Mass(i))
				}
			}
			if in, out := train.Dims(); in != 1 || out != 1 {
				t.Errorf("Dims() = (%d, %d), want (1, 1)", in, out)
			}
		})
	}
}

func TestNewSinusoidErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		modify func(*Spec)
		want   string // substring of the error
	}{
		{"width does not divide", func(s *Spec) { s.TaskWidth = 0.03 }, "does not divide"},
		{"zero width", func(s *Spec) { s.TaskWidth = 0 }, "not positive"},
		{"negative width", func(s *Spec) { s.TaskWidth = -0.01 }, "not positive"},
		{"NaN width", func(s *Spec) { s.TaskWidth = math.NaN() }, "non-finite"},
		{"width wider than range", func(s *Spec) { s.TaskWidth = 10 }, "does not divide"},
		{"too many tasks", func(s *Spec) { s.TaskWidth = 1e-12 }, "more than"},
		{"reversed test range", func(s *Spec) { s.TestAmplitudes = [2]float64{5, 0.1} }, "0 <= lo < hi"},
		{"negative amplitude", func(s *Spec) { s.TestAmplitudes = [2]float64{-1, 5} }, "0 <= lo < hi"},
		{"empty input range", func(s *Spec) { s.XMin, s.XMax = 5, 5 }, "input range"},
		{"negative phase", func(s *Spec) { s.PhaseMax = -1 }, "PhaseMax"},
		{"infinite input", func(s *Spec) { s.XMax = math.Inf(1) }, "non-finite"},
		{"train below test range", func(s *Spec) { s.TrainAmplitudes = [][2]float64{{0, 1}} }, "leave the test"},
		{"train above test range", func(s *Spec) { s.TrainAmplitudes = [][2]float64{{4.95, 5.5}} }, "leave the test"},
		{"reversed train range", func(s *Spec) { s.TrainAmplitudes = [][2]float64{{1, 0.5}} }, "non-empty range"},
		{"NaN train range", func(s *Spec) { s.TrainAmplitudes = [][2]float64{{math.NaN(), 1}} }, "non-empty range"},
		{"no train ranges", func(s *Spec) { s.TrainAmplitudes = nil }, "no task of width"},
		{"train range narrower than a task", func(s *Spec) { s.TrainAmplitudes = [][2]float64{{0.101, 0.109}} }, "no task of width"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := paperSpec()
			tc.modify(&spec)
			train, test, err := New(spec)
			if err == nil {
				t.Fatalf("no error; got %d train and %d test tasks", train.Len(), test.Len())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if train != nil || test != nil {
				t.Error("task sets returned along with an error")
			}
		})
	}
}

// fitSinusoid recovers amplitude and phase from points y = a*sin(x - b)
// = p sin x + q cos x with p = a cos b, q = -a sin b, by least squares on
// (sin x, cos x). The phase is returned in (-pi, pi].
func fitSinusoid(x, y []float64) (a, b float64) {
	var ss, sc, cc, sy, cy float64
	for i := range x {
		s, c := math.Sin(x[i]), math.Cos(x[i])
		ss += s * s
		sc += s * c
		cc += c * c
		sy += s * y[i]
		cy += c * y[i]
	}
	det := ss*cc - sc*sc
	p := (sy*cc - cy*sc) / det
	q := (cy*ss - sy*sc) / det
	return math.Hypot(p, q), math.Atan2(-q, p)
}

func TestSinusoidSample(t *testing.T) {
	t.Parallel()
	wide := paperSpec()
	wide.PhaseMax, wide.XMin, wide.XMax = 2*math.Pi, 0, 1
	tests := []struct {
		name           string
		spec           Spec
		support, query int
	}{
		{"paper", paperSpec(), 10, 10},
		{"full phase, narrow x", wide, 5, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, test, err := New(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			for _, set := range []*Tasks{train, test} {
				b := metalearn.NewBatch(set.Len(), tc.support, tc.query, 1, 1)
				for i := range set.Len() {
					set.Sample(i, rng, b, i)
				}
				for i := range set.Len() {
					checkInstance(t, tc.spec, set, i, b)
				}
			}
		})
	}
}

// checkInstance verifies row i of b as an instance of task i of set.
func checkInstance(t *testing.T, spec Spec, set *Tasks, i int, b *metalearn.Batch) {
	t.Helper()
	lo, hi := set.Interval(i)
	sx, sy, qx, qy := b.Row(i)
	x, y := slices.Concat(sx, qx), slices.Concat(sy, qy)
	for k := range x {
		if x[k] < spec.XMin || x[k] > spec.XMax {
			t.Fatalf("%s: x = %v outside [%v, %v]", set.Name(i), x[k], spec.XMin, spec.XMax)
		}
		if math.Abs(y[k]) > hi {
			t.Fatalf("%s: |y| = %v exceeds the amplitude bound %v", set.Name(i), math.Abs(y[k]), hi)
		}
	}
	const tol = 1e-9
	a, phase := fitSinusoid(x, y)
	if a < lo-tol || a >= hi+tol {
		t.Fatalf("%s: fitted amplitude %v outside [%v, %v)", set.Name(i), a, lo, hi)
	}
	if phase < -tol {
		phase += 2 * math.Pi
	}
	if phase < -tol || phase > spec.PhaseMax+tol {
		t.Fatalf("%s: fitted phase %v outside [0, %v]", set.Name(i), phase, spec.PhaseMax)
	}
	for k := range x {
		if want := a * math.Sin(x[k]-phase); math.Abs(y[k]-want) > 1e-9 {
			t.Fatalf("%s: y = %v at x = %v, fitted sinusoid gives %v", set.Name(i), y[k], x[k], want)
		}
	}
}

// TestSinusoidAmplitudeFromPeaks checks the amplitude without a model fit:
// with many points over a full period the largest |y| approaches a.
func TestSinusoidAmplitudeFromPeaks(t *testing.T) {
	t.Parallel()
	train, _, err := New(paperSpec())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	b := metalearn.NewBatch(train.Len(), 500, 500, 1, 1)
	for i := range train.Len() {
		train.Sample(i, rng, b, i)
		lo, hi := train.Interval(i)
		_, _, qx, qy := b.Row(i)
		peak := 0.0
		for _, y := range qy {
			peak = math.Max(peak, math.Abs(y))
		}
		// [-5, 5] holds at least three peaks of |sin(x - phase)|; with 500
		// points some x lies within 0.05 of one except with probability
		// about 1e-7, and there |y| >= a cos(0.05) > 0.998 a.
		if peak < 0.998*lo || peak > hi {
			t.Errorf("%s: peak |y| = %v over %d points", train.Name(i), peak, len(qx))
		}
	}
}

func TestSinusoidDeterministic(t *testing.T) {
	t.Parallel()
	train, _, err := New(paperSpec())
	if err != nil {
		t.Fatal(err)
	}
	draw := func(seed uint64) *metalearn.Batch {
		rng := rand.New(rand.NewPCG(seed, 1))
		b := metalearn.NewBatch(4, 10, 10, 1, 1)
		for t, i := range []int{0, 50, 95, 99} {
			train.Sample(i, rng, b, t)
		}
		return b
	}
	same := func(a, b *metalearn.Batch) bool {
		return slices.Equal(a.SupportX, b.SupportX) && slices.Equal(a.SupportY, b.SupportY) &&
			slices.Equal(a.QueryX, b.QueryX) && slices.Equal(a.QueryY, b.QueryY)
	}
	if !same(draw(1), draw(1)) {
		t.Error("the same seed gave different batches")
	}
	if same(draw(1), draw(2)) {
		t.Error("different seeds gave the same batch")
	}
}
