package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
)

// Spec describes the instances of a TaskSet: N-way problems with K support
// and J query images per class. The paper uses K = 1 or 5, J = 10 and the
// rotation augmentation.
type Spec struct {
	Ways    int // N, distinct characters per instance
	Shots   int // K, support images per character
	Queries int // J, query images per character
	// Rotate rotates each character of an instance by a random multiple of
	// 90 degrees (the same for all its images in that instance), the
	// augmentation of the paper's appendix.
	Rotate bool
}

// Fixed bounds of an alphabet and a character, so that Sample can keep its
// scratch arrays on the stack (no allocation, safe for concurrent use).
// Omniglot has at most 55 characters per alphabet and 20 drawings per
// character.
const (
	maxCharacters = 1024
	maxDrawings   = 256
)

// TaskSet is a set of Omniglot alphabets as meta-learning tasks: task i is
// the distribution of N-way K-shot instances drawn from alphabet i. It
// implements metalearn.TaskSet with inputs of Size*Size pixels (ink 1.0,
// background 0.0) and one-hot targets of length N.
type TaskSet struct {
	d         *Dataset
	spec      Spec
	alphabets []int        // dataset alphabet index of each task
	logMass   []float64    // log C(Z_i, N)
	mass      []float64    // exp(logMass - max logMass)
	ink       [256]float64 // byte value -> ink in [0, 1]
}

var _ metalearn.TaskSet = (*TaskSet)(nil)

// NewTaskSet makes the alphabets of split s into tasks of N-way K-shot
// instances with J queries. It refuses a spec that no alphabet can serve:
// alphabets with fewer than N characters (named in the error) or characters
// with fewer than K + J drawings.
func NewTaskSet(d *Dataset, s Split, spec Spec) (*TaskSet, error) {
	return newTaskSet(d, d.AlphabetsOf(s), s.String(), spec)
}

func newTaskSet(d *Dataset, alphabets []int, what string, spec Spec) (*TaskSet, error) {
	switch {
	case spec.Ways < 1:
		return nil, fmt.Errorf("omniglot: ways %d must be at least 1", spec.Ways)
	case spec.Shots < 1:
		return nil, fmt.Errorf("omniglot: shots %d must be at least 1", spec.Shots)
	case spec.Queries < 1:
		return nil, fmt.Errorf("omniglot: queries %d must be at least 1", spec.Queries)
	case len(alphabets) == 0:
		return nil, fmt.Errorf("omniglot: the %s split has no alphabets", what)
	}
	var small []string
	for _, a := range alphabets {
		z := d.Characters(a)
		if z < spec.Ways {
			small = append(small, fmt.Sprintf("%s (%d)", d.alphabets[a].Name, z))
		}
		if z > maxCharacters {
			return nil, fmt.Errorf("omniglot: alphabet %s has %d characters, more than the %d supported", d.alphabets[a].Name, z, maxCharacters)
		}
		for c := range z {
			if n := d.Drawings(a, c); n < spec.Shots+spec.Queries || n > maxDrawings {
				return nil, fmt.Errorf("omniglot: character %d of alphabet %s has %d drawings; %d shots + %d queries need %d (at most %d supported)",
					c+1, d.alphabets[a].Name, n, spec.Shots, spec.Queries, spec.Shots+spec.Queries, maxDrawings)
			}
		}
	}
	if len(small) > 0 {
		return nil, fmt.Errorf("omniglot: %d-way instances need %d characters per alphabet, but %d %s alphabets have fewer: %s",
			spec.Ways, spec.Ways, len(small), what, strings.Join(small, ", "))
	}
	ts := &TaskSet{d: d, spec: spec, alphabets: alphabets}
	maxLog := math.Inf(-1)
	for _, a := range alphabets {
		l := logChoose(d.Characters(a), spec.Ways)
		ts.logMass = append(ts.logMass, l)
		maxLog = max(maxLog, l)
	}
	for _, l := range ts.logMass {
		ts.mass = append(ts.mass, math.Exp(l-maxLog))
	}
	for v := range ts.ink {
		ts.ink[v] = float64(v) / 255
	}
	return ts, nil
}

// logChoose is log C(z, n), through log-gamma: C(55, 20) is about 8.7e14
// and C(z, n) overflows float64 beyond z of about 1,000.
func logChoose(z, n int) float64 {
	lz, _ := math.Lgamma(float64(z + 1))
	ln, _ := math.Lgamma(float64(n + 1))
	lr, _ := math.Lgamma(float64(z - n + 1))
	return lz - ln - lr
}

// Len is the number of tasks (alphabets).
func (ts *TaskSet) Len() int { return len(ts.alphabets) }

// Name is the alphabet's name, e.g. "Japanese_(katakana)".
func (ts *TaskSet) Name(i int) string { return ts.d.alphabets[ts.alphabets[i]].Name }

// Mass is the relative number of N-way instances of alphabet i,
// C(Z_i, N) / max_j C(Z_j, N) for Z_i characters: MAML's empirical
// distribution draws alphabets in proportion to the number of distinct
// N-character problems they hold. It is computed as
// exp(log C(Z_i, N) - max_j log C(Z_j, N)), so the largest task has mass 1
// and no mass overflows (C(55, 20) is about 8.7e14); the smallest ratio in
// Omniglot, C(20, 20) / C(55, 20) ~ 1e-15, is far above float64's
// underflow. LogMass gives the unnormalised log C(Z_i, N).
func (ts *TaskSet) Mass(i int) float64 { return ts.mass[i] }

// LogMass is log C(Z_i, N) for alphabet i.
func (ts *TaskSet) LogMass(i int) float64 { return ts.logMass[i] }

// Characters is the number of characters Z_i of alphabet i.
func (ts *TaskSet) Characters(i int) int { return ts.d.Characters(ts.alphabets[i]) }

// Alphabet is the dataset index of task i's alphabet.
func (ts *TaskSet) Alphabet(i int) int { return ts.alphabets[i] }

// Spec returns the instance specification.
func (ts *TaskSet) Spec() Spec { return ts.spec }

// Dims returns Size*Size inputs (an image row-major, one channel) and N
// outputs (one-hot labels).
func (ts *TaskSet) Dims() (in, out int) { return ts.d.size * ts.d.size, ts.spec.Ways }

// Sample draws an N-way instance of alphabet i into row t of b, whose
// Support must be N*K, Query N*J, InDim Size*Size and OutDim N (a mismatch
// is a programming error and panics). From rng only, in this order: the N
// characters as a uniformly random ordered tuple of distinct characters
// (partial Fisher-Yates), the j-th of which gets label j, so the map from
// characters to labels is a uniformly random permutation; then for each
// class j in turn its rotation (if Spec.Rotate) and its K + J distinct
// drawings, the first K for the support set and the rest for the query set.
// Class j's support points are rows j*K .. j*K+K-1 of the support set and
// its queries rows j*J .. j*J+J-1 of the query set. Sample does not allocate
// and may be called concurrently on distinct rows.
func (ts *TaskSet) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	n, k, j := ts.spec.Ways, ts.spec.Shots, ts.spec.Queries
	pixels := ts.d.size * ts.d.size
	if b.Support != n*k || b.Query != n*j || b.InDim != pixels || b.OutDim != n {
		panic(fmt.Sprintf("omniglot: batch of %d support and %d query points of %d -> %d values, want %d, %d, %d -> %d",
			b.Support, b.Query, b.InDim, b.OutDim, n*k, n*j, pixels, n))
	}
	sx, sy, qx, qy := b.Row(t)
	clear(sy)
	clear(qy)

	a := ts.alphabets[i]
	first, z := ts.d.charFirst[a], ts.d.Characters(a)
	var chars [maxCharacters]uint16
	for c := range z {
		chars[c] = uint16(c)
	}
	for c := range n {
		r := c + rng.IntN(z-c)
		chars[c], chars[r] = chars[r], chars[c]
	}
	var drawings [maxDrawings]uint8
	for label := range n {
		rot := 0
		if ts.spec.Rotate {
			rot = rng.IntN(4)
		}
		imFirst := ts.d.imageFirst[first+int(chars[label])]
		m := ts.d.imageFirst[first+int(chars[label])+1] - imFirst
		for e := range m {
			drawings[e] = uint8(e)
		}
		for e := range k + j {
			r := e + rng.IntN(m-e)
			drawings[e], drawings[r] = drawings[r], drawings[e]
		}
		for e := range k + j {
			src := ts.d.store.encoded(imFirst + int(drawings[e]))
			var x, y []float64
			if e < k {
				p := label*k + e
				x, y = sx[p*pixels:][:pixels], sy[p*n:][:n]
			} else {
				p := label*j + e - k
				x, y = qx[p*pixels:][:pixels], qy[p*n:][:n]
			}
			ts.copyRotated(x, src, rot)
			y[label] = 1
		}
	}
}

// copyRotated writes the ink of the encoded size x size image src (row
// spans, store.go), rotated by rot quarter turns counterclockwise, to dst:
// output (y, x) reads source (y, x), (x, size-1-y), (size-1-y, size-1-x) or
// (size-1-x, y). Only the spans are written after clearing dst: a source
// pixel (sy, sx) lands at output sy*size+sx, (size-1-sx)*size+sy,
// (size-1-sy)*size+size-1-sx or sx*size+size-1-sy, a step of 1, -size, -1
// or size along the span.
func (ts *TaskSet) copyRotated(dst []float64, src []byte, rot int) {
	n := ts.d.size
	dst = dst[:n*n]
	clear(dst) // ink[0] == 0
	ink := &ts.ink
	for sy := range n {
		var sx int
		var span []uint8
		sx, span, src = nextSpan(src)
		if len(span) == 0 {
			continue
		}
		var p, step int
		switch rot {
		case 0:
			p, step = sy*n+sx, 1
		case 1:
			p, step = (n-1-sx)*n+sy, -n
		case 2:
			p, step = (n-1-sy)*n+n-1-sx, -1
		case 3:
			p, step = sx*n+n-1-sy, n
		}
		for _, v := range span {
			dst[p] = ink[v]
			p += step
		}
	}
}
