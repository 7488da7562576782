package imagefolder

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/trmaml/trmaml/metalearn"
)

// maxClasses bounds the classes of a group and the ways of an instance.
const maxClasses = 1 << 16

// Spec describes the instances of a TaskSet: N-way problems with K support
// and J query images per class.
type Spec struct {
	Ways    int // N, distinct classes per instance
	Shots   int // K, support images per class
	Queries int // J, query images per class
	// Rotate turns each class of an instance by a random multiple of 90
	// degrees (the same for all its images in that instance).
	Rotate bool
	// Flip mirrors each image left to right with probability 1/2.
	Flip bool
}

// TaskSet is the groups of one split as meta-learning tasks: task i is the
// distribution of N-way K-shot instances of group i. It implements
// metalearn.TaskSet with inputs of H*W*C values (row-major, a pixel's
// channels adjacent) and one-hot targets of length N.
type TaskSet struct {
	d      *Dataset
	split  Split
	spec   Spec
	mass   []float64
	values [][256]float64 // per channel: byte -> input value
}

var _ metalearn.TaskSet = (*TaskSet)(nil)

// NewTaskSet makes the groups of split s into tasks. It refuses a spec that
// the data cannot serve, naming every group with fewer than N classes and
// every class with fewer than K + J images.
func NewTaskSet(d *Dataset, s Split, spec Spec) (*TaskSet, error) {
	switch {
	case spec.Ways < 1 || spec.Shots < 1 || spec.Queries < 1:
		return nil, fmt.Errorf("imagefolder: ways %d, shots %d and queries %d must be at least 1", spec.Ways, spec.Shots, spec.Queries)
	case spec.Rotate && d.H() != d.W():
		return nil, fmt.Errorf("imagefolder: rotations need square images, these are %dx%d", d.H(), d.W())
	}
	groups := d.layout.splits[s]
	if len(groups) == 0 {
		return nil, fmt.Errorf("imagefolder: the %s split has no groups", s)
	}
	if short := shortfalls(groups, spec); len(short) > 0 {
		if len(short) > maxListed {
			short = append(short[:maxListed], fmt.Sprintf("... and %d more", len(short)-maxListed))
		}
		return nil, fmt.Errorf("the %s split of %s is too small:\n  %s", s, d.layout.dir, strings.Join(short, "\n  "))
	}
	ts := &TaskSet{d: d, split: s, spec: spec, values: make([][256]float64, d.C())}
	logMass := make([]float64, len(groups))
	maxLog := math.Inf(-1)
	for i, g := range groups {
		logMass[i] = logChoose(len(g.classes), spec.Ways)
		maxLog = max(maxLog, logMass[i])
	}
	for _, l := range logMass {
		ts.mass = append(ts.mass, math.Exp(l-maxLog))
	}
	for ch := range ts.values {
		for v := range 256 {
			x := float64(v) / 255
			if d.Std != nil && d.Std[ch] > 0 {
				x = (x - d.Mean[ch]) / d.Std[ch]
			}
			ts.values[ch][v] = x
		}
	}
	return ts, nil
}

// shortfalls names every group with fewer than N classes and every class
// with fewer than K + J images.
func shortfalls(groups []group, spec Spec) []string {
	var short []string
	for _, g := range groups {
		if len(g.classes) < spec.Ways {
			short = append(short, fmt.Sprintf("group %s has %d classes, %d-way instances need %d", g.name, len(g.classes), spec.Ways, spec.Ways))
		}
		for _, c := range g.classes {
			if n := len(c.files); n < spec.Shots+spec.Queries {
				short = append(short, fmt.Sprintf("class %s of group %s has %d images, %d shots + %d queries need %d",
					c.name, g.name, n, spec.Shots, spec.Queries, spec.Shots+spec.Queries))
			}
		}
	}
	return short
}

// logChoose is log C(z, n).
func logChoose(z, n int) float64 {
	lz, _ := math.Lgamma(float64(z + 1))
	ln, _ := math.Lgamma(float64(n + 1))
	lr, _ := math.Lgamma(float64(z - n + 1))
	return lz - ln - lr
}

// Len is the number of tasks (groups).
func (ts *TaskSet) Len() int { return len(ts.d.layout.splits[ts.split]) }

// Name is the group's name.
func (ts *TaskSet) Name(i int) string { return ts.d.layout.splits[ts.split][i].name }

// Mass is C(Z_i, N) / max_j C(Z_j, N) for a group of Z_i classes: MAML's
// empirical distribution draws groups in proportion to their distinct
// N-class problems, as the TR-MAML code does.
func (ts *TaskSet) Mass(i int) float64 { return ts.mass[i] }

// Classes is the number of classes of group i.
func (ts *TaskSet) Classes(i int) int { return len(ts.d.layout.splits[ts.split][i].classes) }

// Dims returns H*W*C inputs and N outputs.
func (ts *TaskSet) Dims() (in, out int) { return ts.d.H() * ts.d.W() * ts.d.C(), ts.spec.Ways }

// Sample draws an N-way instance of group i into row t of b, whose
// Support must be N*K, Query N*J, InDim H*W*C and OutDim N (a mismatch is a
// programming error and panics). From rng only, in this order (the Omniglot
// family's, so that the same images in the same split give the same
// instances): the N classes as a uniformly random ordered tuple of distinct
// classes (partial Fisher-Yates), the j-th of which gets label j; then for
// each class j in turn its rotation (if Spec.Rotate), its K + J distinct
// images (the first K the support set) and, if Spec.Flip, a coin per image.
// Class j's support points are rows j*K .. j*K+K-1 of the support set and
// its queries rows j*J .. j*J+J-1 of the query set. Sample may be called
// concurrently on distinct rows.
func (ts *TaskSet) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	n, k, j := ts.spec.Ways, ts.spec.Shots, ts.spec.Queries
	in := ts.d.H() * ts.d.W() * ts.d.C()
	if b.Support != n*k || b.Query != n*j || b.InDim != in || b.OutDim != n {
		panic(fmt.Sprintf("imagefolder: batch of %d support and %d query points of %d -> %d values, want %d, %d, %d -> %d",
			b.Support, b.Query, b.InDim, b.OutDim, n*k, n*j, in, n))
	}
	sx, sy, qx, qy := b.Row(t)
	clear(sy)
	clear(qy)
	g := ts.d.layout.splits[ts.split][i]
	first := ts.d.first[ts.split][i]
	z := len(g.classes)
	classes := make([]int, z)
	for c := range classes {
		classes[c] = c
	}
	for c := range n {
		r := c + rng.IntN(z-c)
		classes[c], classes[r] = classes[r], classes[c]
	}
	var images []int
	for label := range n {
		rot := 0
		if ts.spec.Rotate {
			rot = rng.IntN(4)
		}
		c := classes[label]
		m := len(g.classes[c].files)
		images = images[:0]
		for e := range m {
			images = append(images, e)
		}
		for e := range k + j {
			r := e + rng.IntN(m-e)
			images[e], images[r] = images[r], images[e]
		}
		for e := range k + j {
			flip := ts.spec.Flip && rng.IntN(2) == 1
			src := ts.d.set.Image(first[c] + images[e])
			var x, y []float64
			if e < k {
				p := label*k + e
				x, y = sx[p*in:][:in], sy[p*n:][:n]
			} else {
				p := label*j + e - k
				x, y = qx[p*in:][:in], qy[p*n:][:n]
			}
			ts.copyImage(x, src, rot, flip)
			y[label] = 1
		}
	}
}

// copyImage writes src's values to dst, rotated by rot quarter turns
// counterclockwise (the Omniglot family's rotation: source pixel (y, x)
// lands at (y, x), (n-1-x, y), (n-1-y, n-1-x) or (x, n-1-y)) and then
// mirrored left to right if flip.
func (ts *TaskSet) copyImage(dst []float64, src []uint8, rot int, flip bool) {
	h, w, c := ts.d.H(), ts.d.W(), ts.d.C()
	if rot == 0 && !flip {
		for p := 0; p < len(src); p += c {
			for ch := range c {
				dst[p+ch] = ts.values[ch][src[p+ch]]
			}
		}
		return
	}
	for y := range h {
		for x := range w {
			dy, dx := y, x
			switch rot {
			case 1:
				dy, dx = w-1-x, y
			case 2:
				dy, dx = h-1-y, w-1-x
			case 3:
				dy, dx = x, h-1-y
			}
			if flip {
				dx = w - 1 - dx
			}
			s, d := (y*w+x)*c, (dy*w+dx)*c
			for ch := range c {
				dst[d+ch] = ts.values[ch][src[s+ch]]
			}
		}
	}
}
