package sinusoid

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/trmaml/trmaml/metalearn"
)

// maxTasks bounds the number of tasks New builds, so that a
// mistyped width cannot request an absurd allocation.
const maxTasks = 1 << 20

// Spec describes a sinusoid task family. An instance draws an
// amplitude a and a phase b ~ U[0, PhaseMax] and has data points x ~
// U[XMin, XMax] with targets a*sin(x - b). A task is the uniform distribution
// over the instances whose amplitude lies in one subinterval of width
// TaskWidth: the test tasks partition TestAmplitudes = [lo, hi] into such
// subintervals, and the training tasks are the test tasks that lie inside one
// of the TrainAmplitudes ranges. The paper uses PhaseMax = pi, x in [-5, 5],
// TaskWidth 0.01, test amplitudes [0.1, 5] and training amplitudes
// [0.1, 1.05] and [4.95, 5], which gives 490 test and 100 training tasks with
// the large amplitudes rare at meta-training time.
type Spec struct {
	PhaseMax, XMin, XMax, TaskWidth float64
	TestAmplitudes                  [2]float64
	TrainAmplitudes                 [][2]float64
}

// Tasks is a finite set of sinusoid tasks, each an amplitude
// subinterval [lo, hi) of a Spec. It implements metalearn.TaskSet with
// one-dimensional inputs and outputs and equal mass for every task.
type Tasks struct {
	phaseMax, xMin, xMax float64
	lo, hi               []float64
	decimals             int // digits after the point in Name
}

var _ metalearn.TaskSet = (*Tasks)(nil)

// New validates spec and builds its training and test task sets. The
// test tasks are the subintervals [lo + i*w, lo + (i+1)*w) covering
// TestAmplitudes = [lo, hi] with w = TaskWidth, whose count (hi-lo)/w must be
// an integer up to a relative 1e-9; the training tasks are those test tasks
// that lie inside a TrainAmplitudes range, up to a tolerance of 1e-9 relative
// to the amplitude scale. Each training range must lie inside TestAmplitudes,
// and the training set must not be empty.
func New(spec Spec) (train, test *Tasks, err error) {
	finite := func(v ...float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	lo, hi, w := spec.TestAmplitudes[0], spec.TestAmplitudes[1], spec.TaskWidth
	switch {
	case !finite(spec.PhaseMax, spec.XMin, spec.XMax, w, lo, hi):
		return nil, nil, fmt.Errorf("sinusoid: spec has a non-finite value: %+v", spec)
	case spec.PhaseMax < 0:
		return nil, nil, fmt.Errorf("sinusoid: PhaseMax %g is negative", spec.PhaseMax)
	case spec.XMin >= spec.XMax:
		return nil, nil, fmt.Errorf("sinusoid: input range [%g, %g] is empty", spec.XMin, spec.XMax)
	case w <= 0:
		return nil, nil, fmt.Errorf("sinusoid: TaskWidth %g is not positive", w)
	case lo < 0 || lo >= hi:
		return nil, nil, fmt.Errorf("sinusoid: test amplitudes [%g, %g] must satisfy 0 <= lo < hi", lo, hi)
	}
	ratio := (hi - lo) / w
	if ratio > maxTasks {
		return nil, nil, fmt.Errorf("sinusoid: TaskWidth %g gives %.0f tasks, more than %d", w, ratio, maxTasks)
	}
	count := int(math.Round(ratio))
	if count < 1 || math.Abs(float64(count)*w-(hi-lo)) > 1e-9*(hi-lo) {
		return nil, nil, fmt.Errorf("sinusoid: TaskWidth %g does not divide the test amplitudes [%g, %g]", w, lo, hi)
	}

	decimals := nameDecimals(lo, w)
	test = &Tasks{phaseMax: spec.PhaseMax, xMin: spec.XMin, xMax: spec.XMax, decimals: decimals}
	for i := range count {
		a, b := lo+float64(i)*w, lo+float64(i+1)*w
		if i == count-1 {
			b = hi // the last edge is exactly the end of the range
		}
		test.lo = append(test.lo, a)
		test.hi = append(test.hi, b)
	}

	tol := 1e-9 * math.Max(hi, w)
	for _, r := range spec.TrainAmplitudes {
		switch {
		case !finite(r[0], r[1]) || r[0] >= r[1]:
			return nil, nil, fmt.Errorf("sinusoid: train amplitudes [%g, %g] are not a non-empty range", r[0], r[1])
		case r[0] < lo-tol || r[1] > hi+tol:
			return nil, nil, fmt.Errorf("sinusoid: train amplitudes [%g, %g] leave the test amplitudes [%g, %g]", r[0], r[1], lo, hi)
		}
	}
	train = &Tasks{phaseMax: spec.PhaseMax, xMin: spec.XMin, xMax: spec.XMax, decimals: decimals}
	for i := range test.lo {
		for _, r := range spec.TrainAmplitudes {
			if test.lo[i] >= r[0]-tol && test.hi[i] <= r[1]+tol {
				train.lo = append(train.lo, test.lo[i])
				train.hi = append(train.hi, test.hi[i])
				break
			}
		}
	}
	if train.Len() == 0 {
		return nil, nil, fmt.Errorf("sinusoid: no task of width %g fits in the train amplitudes %v", w, spec.TrainAmplitudes)
	}
	return train, test, nil
}

// nameDecimals is the number of digits after the decimal point needed to print
// every task edge lo + i*w exactly (at most 12), so names read
// "amplitude [4.95,4.96)" rather than showing rounding noise.
func nameDecimals(lo, w float64) int {
	for d := 0; d < 12; d++ {
		s := math.Pow(10, float64(d))
		if math.Abs(lo*s-math.Round(lo*s)) < 1e-6 && math.Abs(w*s-math.Round(w*s)) < 1e-6 {
			return d
		}
	}
	return 12
}

// Len is the number of tasks.
func (s *Tasks) Len() int { return len(s.lo) }

// Name identifies task i by its amplitude interval, e.g.
// "amplitude [4.95,4.96)".
func (s *Tasks) Name(i int) string {
	return fmt.Sprintf("amplitude [%.*f,%.*f)", s.decimals, s.lo[i], s.decimals, s.hi[i])
}

// Mass is 1 for every task: as in the paper, every task holds the same number
// of instances, so MAML samples the tasks uniformly.
func (s *Tasks) Mass(i int) float64 { return 1 }

// Dims reports scalar inputs and outputs.
func (s *Tasks) Dims() (in, out int) { return 1, 1 }

// Interval returns the amplitude range [lo, hi) of task i, for reports and
// plots.
func (s *Tasks) Interval(i int) (lo, hi float64) { return s.lo[i], s.hi[i] }

// Sample draws an instance of task i into row t of b, which must have
// InDim = OutDim = 1 as reported by Dims. It draws, from rng only and in this
// order, the amplitude a ~ U[lo_i, hi_i), the phase ~ U[0, PhaseMax], then
// the b.Support support inputs and the b.Query query inputs x ~ U[XMin, XMax],
// and sets every target to a*sin(x - phase). The same rng state therefore
// always gives the same instance.
func (s *Tasks) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	lo, hi := s.lo[i], s.hi[i]
	a := lo + (hi-lo)*rng.Float64()
	if a >= hi { // rounding can reach hi; keep the interval half-open
		a = math.Nextafter(hi, lo)
	}
	phase := s.phaseMax * rng.Float64()
	sx, sy, qx, qy := b.Row(t)
	for _, xy := range [][2][]float64{{sx, sy}, {qx, qy}} {
		for j := range xy[0] {
			x := s.xMin + (s.xMax-s.xMin)*rng.Float64()
			xy[0][j] = x
			xy[1][j] = a * math.Sin(x-phase)
		}
	}
}
