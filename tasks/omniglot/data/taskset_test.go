package data

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/trmaml/trmaml/metalearn"
)

// rotateCCW turns a size x size image a quarter turn counterclockwise:
// pixel (y, x) moves to (size-1-x, y).
func rotateCCW(img []uint8, size int) []uint8 {
	out := make([]uint8, len(img))
	for y := range size {
		for x := range size {
			out[(size-1-x)*size+y] = img[y*size+x]
		}
	}
	return out
}

// origin is where a sampled image can come from.
type origin struct{ char, drawing, rot int }

// origins maps every image of alphabet a, in each of the 4 rotations, to
// where it comes from (several origins when images coincide).
func origins(d *Dataset, a int) map[string][]origin {
	m := map[string][]origin{}
	for c := range d.Characters(a) {
		for j := range d.Drawings(a, c) {
			img := d.Image(a, c, j)
			for r := range 4 {
				m[string(img)] = append(m[string(img)], origin{c, j, r})
				img = rotateCCW(img, d.size)
			}
		}
	}
	return m
}

// toBytes turns a sampled image back into bytes (inputs are byte/255).
func toBytes(t *testing.T, x []float64) string {
	t.Helper()
	b := make([]byte, len(x))
	for i, v := range x {
		f := v * 255
		if math.Abs(f-math.Round(f)) > 1e-9 || f < 0 || f > 255 {
			t.Fatalf("pixel %d is %v, not a byte / 255", i, v)
		}
		b[i] = byte(math.Round(f))
	}
	return string(b)
}

// instance is a sampled instance decoded back to its origins.
type instance struct {
	chars     []int // character of each label
	rots      []int // rotation of each label
	drawings  [][]int
	ambiguous bool // some image matched more than one drawing or rotation
}

// identify finds the origin of every point of row t: its label from the one-hot
// target (which must be the point's class by position) and its character,
// drawing and rotation from the pixels.
func identify(t *testing.T, ts *TaskSet, b *metalearn.Batch, row int, m map[string][]origin) instance {
	t.Helper()
	n, k, j := ts.spec.Ways, ts.spec.Shots, ts.spec.Queries
	in, _ := ts.Dims()
	sx, sy, qx, qy := b.Row(row)
	inst := instance{chars: make([]int, n), rots: make([]int, n), drawings: make([][]int, n)}
	for label := range n {
		type point struct{ x, y []float64 }
		var points []point
		for e := range k {
			p := label*k + e
			points = append(points, point{sx[p*in : (p+1)*in], sy[p*n : (p+1)*n]})
		}
		for e := range j {
			p := label*j + e
			points = append(points, point{qx[p*in : (p+1)*in], qy[p*n : (p+1)*n]})
		}
		var common []origin // candidate (char, rot) pairs shared by all points
		for e, pt := range points {
			for l, v := range pt.y {
				if want := float64(b2i(l == label)); v != want {
					t.Fatalf("point %d of class %d: target %v, want one-hot %d", e, label, pt.y, label)
				}
			}
			cands, ok := m[toBytes(t, pt.x)]
			if !ok {
				t.Fatalf("point %d of class %d is no (rotated) image of alphabet %s", e, label, ts.Name(0))
			}
			if len(cands) > 1 {
				inst.ambiguous = true
			}
			if e == 0 {
				common = cands
			} else {
				common = slices.DeleteFunc(slices.Clone(common), func(c origin) bool {
					return !slices.ContainsFunc(cands, func(o origin) bool { return o.char == c.char && o.rot == c.rot })
				})
			}
			inst.drawings[label] = append(inst.drawings[label], cands[0].drawing)
		}
		if len(common) == 0 {
			t.Fatalf("class %d: its points do not share one character and one rotation", label)
		}
		inst.chars[label], inst.rots[label] = common[0].char, common[0].rot
	}
	return inst
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSampleProperties(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	for _, spec := range []Spec{
		{Ways: 5, Shots: 1, Queries: 3, Rotate: true},
		{Ways: 20, Shots: 5, Queries: 10, Rotate: true},
		{Ways: 3, Shots: 2, Queries: 2, Rotate: false},
	} {
		ts, err := NewTaskSet(d, Test, spec)
		if err != nil {
			t.Fatal(err)
		}
		in, out := ts.Dims()
		if in != 28*28 || out != spec.Ways {
			t.Fatalf("Dims %d, %d", in, out)
		}
		b := metalearn.NewBatch(1, spec.Ways*spec.Shots, spec.Ways*spec.Queries, in, out)
		rng := rand.New(rand.NewPCG(7, 8))
		rotations := 0
		for _, task := range []int{0, 6, ts.Len() - 1} { // Angelic (20 characters), Glagolitic, ULOG
			m := origins(d, ts.Alphabet(task))
			for range 20 {
				ts.Sample(task, rng, b, 0)
				inst := identify(t, ts, b, 0, m)
				if got := len(slices.Compact(slices.Sorted(slices.Values(inst.chars)))); got != spec.Ways {
					t.Fatalf("%v: %d distinct characters among %v", spec, got, inst.chars)
				}
				for label, dr := range inst.drawings {
					if !inst.ambiguous && len(slices.Compact(slices.Sorted(slices.Values(dr)))) != len(dr) {
						t.Fatalf("%v: class %d repeats a drawing: support and query %v", spec, label, dr)
					}
					if inst.rots[label] != 0 {
						rotations++
					}
				}
			}
		}
		if spec.Rotate != (rotations > 0) {
			t.Errorf("%v: %d rotated classes", spec, rotations)
		}
	}
}

func TestSampleDeterministicAndRowIndependent(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	ts, err := NewTaskSet(d, Train, Spec{Ways: 5, Shots: 1, Queries: 2, Rotate: true})
	if err != nil {
		t.Fatal(err)
	}
	in, out := ts.Dims()
	one := metalearn.NewBatch(1, 5, 10, in, out)
	three := metalearn.NewBatch(3, 5, 10, in, out)
	ts.Sample(4, rand.New(rand.NewPCG(1, 2)), one, 0)
	ts.Sample(9, rand.New(rand.NewPCG(3, 4)), three, 0)
	ts.Sample(4, rand.New(rand.NewPCG(1, 2)), three, 1)
	ts.Sample(9, rand.New(rand.NewPCG(3, 4)), three, 2)
	sx, sy, qx, qy := one.Row(0)
	for _, row := range []int{1} {
		tx, ty, ux, uy := three.Row(row)
		if !slices.Equal(sx, tx) || !slices.Equal(sy, ty) || !slices.Equal(qx, ux) || !slices.Equal(qy, uy) {
			t.Error("the same rng state gave different instances")
		}
	}
	a0, _, _, _ := three.Row(0)
	a2, _, _, _ := three.Row(2)
	if !slices.Equal(a0, a2) {
		t.Error("filling row 1 changed row 0 or row 2")
	}
}

func TestSampleAllocatesNothing(t *testing.T) {
	d := sharedDataset(t)
	for _, spec := range []Spec{{5, 1, 10, true}, {20, 5, 10, true}} {
		ts, err := NewTaskSet(d, Train, spec)
		if err != nil {
			t.Fatal(err)
		}
		in, out := ts.Dims()
		b := metalearn.NewBatch(2, spec.Ways*spec.Shots, spec.Ways*spec.Queries, in, out)
		rng := rand.New(rand.NewPCG(1, 1))
		i := 0
		if allocs := testing.AllocsPerRun(200, func() { ts.Sample(i%ts.Len(), rng, b, i%2); i++ }); allocs != 0 {
			t.Errorf("%v: %v allocations per instance", spec, allocs)
		}
	}
}

// chiSquare returns the p-value of Pearson's statistic for counts against
// expected frequencies probs (summing to 1).
func chiSquare(t *testing.T, counts []int, probs []float64) float64 {
	t.Helper()
	total := 0
	for _, c := range counts {
		total += c
	}
	stat := 0.0
	for i, c := range counts {
		e := probs[i] * float64(total)
		if e < 5 {
			t.Fatalf("expected count %.1f in cell %d: too few draws for a chi-square test", e, i)
		}
		stat += (float64(c) - e) * (float64(c) - e) / e
	}
	return distuv.ChiSquared{K: float64(len(counts) - 1)}.Survival(stat)
}

// TestLabelsAndRotationsUniform: the character that gets label 0 (and the
// one that gets the last label) is uniform over the alphabet, so labels are
// a random permutation and not, say, in character order; rotations are
// uniform over the 4 quarter turns.
func TestLabelsAndRotationsUniform(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	ts, err := NewTaskSet(d, Test, Spec{Ways: 5, Shots: 1, Queries: 1, Rotate: true})
	if err != nil {
		t.Fatal(err)
	}
	const task = 2 // Atlantean, 26 characters
	z := ts.Characters(task)
	m := origins(d, ts.Alphabet(task))
	in, out := ts.Dims()
	b := metalearn.NewBatch(1, 5, 5, in, out)
	rng := rand.New(rand.NewPCG(11, 12))
	first, last, rots := make([]int, z), make([]int, z), make([]int, 4)
	const draws = 2600
	for range draws {
		ts.Sample(task, rng, b, 0)
		inst := identify(t, ts, b, 0, m)
		first[inst.chars[0]]++
		last[inst.chars[4]]++
		rots[inst.rots[0]]++
	}
	uniform := func(n int) []float64 {
		p := make([]float64, n)
		for i := range p {
			p[i] = 1 / float64(n)
		}
		return p
	}
	for name, c := range map[string][]int{"label 0": first, "label 4": last, "rotation": rots} {
		if p := chiSquare(t, c, uniform(len(c))); p < 1e-3 {
			t.Errorf("%s: counts %v, chi-square p = %.2g", name, c, p)
		}
	}
}

// exactChoose is C(z, n) as an exact integer.
func exactChoose(z, n int) *big.Float {
	return new(big.Float).SetInt(new(big.Int).Binomial(int64(z), int64(n)))
}

func TestMassIsBinomial(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	for _, ways := range []int{1, 5, 20} {
		ts, err := NewTaskSet(d, Train, Spec{Ways: ways, Shots: 1, Queries: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range ts.Len() {
			want, _ := exactChoose(ts.Characters(i), ways).Float64()
			if got := math.Exp(ts.LogMass(i)); math.Abs(got-want) > 1e-11*want {
				t.Errorf("%d-way %s: exp(LogMass) %v, C(%d, %d) = %v", ways, ts.Name(i), got, ts.Characters(i), ways, want)
			}
			for j := range ts.Len() {
				ratio, _ := new(big.Float).Quo(exactChoose(ts.Characters(i), ways), exactChoose(ts.Characters(j), ways)).Float64()
				if got := ts.Mass(i) / ts.Mass(j); math.Abs(got-ratio) > 1e-11*ratio {
					t.Fatalf("%d-way: mass ratio %s/%s %v, want %v", ways, ts.Name(i), ts.Name(j), got, ratio)
				}
			}
		}
	}
}

// recording wraps a TaskSet and counts the tasks a trainer samples.
type recording struct {
	*TaskSet
	counts []int
}

func (r *recording) Sample(i int, rng *rand.Rand, b *metalearn.Batch, t int) {
	r.counts[i]++
	r.TaskSet.Sample(i, rng, b, t)
}

// nullObjective is a model with one parameter and zero losses: enough to
// drive the trainer's sampling.
type nullObjective struct{ tasks int }

func (o nullObjective) NumParams() int { return 1 }
func (o nullObjective) Tasks() int     { return o.tasks }
func (o nullObjective) Losses(w []float64, b *metalearn.Batch, weights, losses, grad []float64) error {
	clear(losses)
	clear(grad)
	return nil
}

// TestMAMLDrawsAlphabetsByBinomial runs MAML's trainer on the 25 training
// alphabets with 5-way instances and compares the frequencies of the
// sampled alphabets with C(Z_i, 5) / sum_j C(Z_j, 5), computed exactly.
func TestMAMLDrawsAlphabetsByBinomial(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	spec := Spec{Ways: 5, Shots: 1, Queries: 1, Rotate: true}
	ts, err := NewTaskSet(d, Train, spec)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{ts, make([]int, ts.Len())}
	const batch, steps = 25, 1000
	tr, err := metalearn.NewTrainer(nullObjective{batch}, rec, []float64{0}, metalearn.Settings{Method: metalearn.MAML{}.New(), Iterations: steps,
		Batch: batch, Support: 5, Query: 5, Output: metalearn.OutputLast, Optimizer: &metalearn.SGD{}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for range steps {
		if _, err := tr.Step(); err != nil {
			t.Fatal(err)
		}
	}
	total := new(big.Float)
	for i := range ts.Len() {
		total.Add(total, exactChoose(ts.Characters(i), 5))
	}
	probs := make([]float64, ts.Len())
	for i := range probs {
		probs[i], _ = new(big.Float).Quo(exactChoose(ts.Characters(i), 5), total).Float64()
	}
	if p := chiSquare(t, rec.counts, probs); p < 1e-3 {
		t.Errorf("alphabet counts %v against C(Z_i, 5): chi-square p = %.2g", rec.counts, p)
	}
}

func TestNewTaskSetRefuses(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	tests := []struct {
		split Split
		spec  Spec
		want  string
	}{
		{Validation, Spec{Ways: 20, Shots: 1, Queries: 1},
			"20-way instances need 20 characters per alphabet, but 4 validation alphabets have fewer: Blackfoot_(Canadian_Aboriginal_Syllabics) (14), Inuktitut_(Canadian_Aboriginal_Syllabics) (16), Ojibwe_(Canadian_Aboriginal_Syllabics) (14), Tagalog (17)"},
		{Test, Spec{Ways: 24, Shots: 1, Queries: 1}, "2 test alphabets have fewer: Angelic (20), Syriac_(Serto) (23)"},
		{Train, Spec{Ways: 5, Shots: 5, Queries: 16}, "has 20 drawings; 5 shots + 16 queries need 21"},
		{Train, Spec{Ways: 0, Shots: 1, Queries: 1}, "ways 0 must be at least 1"},
		{Train, Spec{Ways: 5, Shots: 0, Queries: 1}, "shots 0"},
		{Train, Spec{Ways: 5, Shots: 1, Queries: 0}, "queries 0"},
	}
	for _, tt := range tests {
		_, err := NewTaskSet(d, tt.split, tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v %+v: %v, want %q", tt.split, tt.spec, err, tt.want)
		}
	}
	if _, err := NewTaskSet(d, Validation, Spec{Ways: 14, Shots: 5, Queries: 15, Rotate: true}); err != nil {
		t.Errorf("14-way on the validation alphabets: %v", err)
	}
}

func TestSampleRejectsMismatchedBatch(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	ts, err := NewTaskSet(d, Train, Spec{Ways: 5, Shots: 1, Queries: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "want 5, 50, 784 -> 5") {
			t.Errorf("panic %v", r)
		}
	}()
	ts.Sample(0, rand.New(rand.NewPCG(1, 1)), metalearn.NewBatch(1, 5, 5, 784, 5), 0)
}
