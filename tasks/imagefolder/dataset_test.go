package imagefolder

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/data/imagecache"
	"github.com/trmaml/trmaml/internal/treetest"
	"github.com/trmaml/trmaml/metalearn"
)

// TestColourGroups: the researcher's folder of the issue (6 groups x 10
// classes x 20 colour 32x32 PNGs) loads with its colour kept, three channels
// inferred, every pixel where the file has it, and a second load from the
// cache equal to the first.
func TestColourGroups(t *testing.T) {
	tr := tree{groups: 6, classes: 10, images: 20, h: 32, w: 32}
	dir := tr.write(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	opt := Options{Section: section(func(s *Config) {
		s.Splits = SplitLists{Train: []string{"g1", "g2", "g3", "g4"}, Validation: []string{"g5"}, Test: []string{"g6"}}
	})}
	d, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if d.H() != 32 || d.W() != 32 || d.C() != 3 || d.Images() != 1200 || d.Info.FromCache {
		t.Fatalf("loaded %dx%dx%d, %d images, from cache %v; want 32x32x3, 1200, decoded", d.H(), d.W(), d.C(), d.Images(), d.Info.FromCache)
	}
	for _, tc := range []struct {
		s       Split
		g, c, j int
		group   int // in the tree
	}{{Train, 0, 0, 0, 0}, {Train, 3, 9, 19, 3}, {Validation, 0, 4, 7, 4}, {Test, 0, 2, 11, 5}} {
		img := d.Image(tc.s, tc.g, tc.c, tc.j)
		for y := range 32 {
			for x := range 32 {
				p := pixelOf(tc.group, tc.c, tc.j, x, y)
				if got := img[(y*32+x)*3:][:3]; got[0] != p.R || got[1] != p.G || got[2] != p.B {
					t.Fatalf("%s group %d class %d image %d pixel (%d, %d) = %v, want %v", tc.s, tc.g, tc.c, tc.j, x, y, got, p)
				}
			}
		}
	}
	if got := d.Groups(Train); len(got) != 4 || got[3] != "g4" {
		t.Errorf("train groups %v", got)
	}
	again, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Info.FromCache || !bytes.Equal(again.set.Pix, d.set.Pix) {
		t.Errorf("second load from cache %v (%s), pixels equal %v", again.Info.FromCache, again.Info.CachePath, bytes.Equal(again.set.Pix, d.set.Pix))
	}

	// An instance: N distinct classes of the group, K + J distinct images
	// of each, values pixel/255, one-hot labels.
	ts, err := NewTaskSet(d, Train, Spec{Ways: 5, Shots: 1, Queries: 15})
	if err != nil {
		t.Fatal(err)
	}
	in, out := ts.Dims()
	if in != 32*32*3 || out != 5 {
		t.Fatalf("Dims %d, %d", in, out)
	}
	b := metalearn.NewBatch(1, 5, 75, in, out)
	ts.Sample(2, rand.New(rand.NewPCG(1, 2)), b, 0)
	seen := map[[2]int]bool{}
	classOf := map[int]int{}
	check := func(x, y []float64) {
		label := -1
		for l, v := range y {
			if v == 1 {
				label = l
			}
		}
		c := int(math.Round(x[0]*255)) - 40*2 // R of (0, 0) is 40g + c
		j := (int(math.Round(x[1] * 255))) / 11
		if prev, ok := classOf[label]; ok && prev != c {
			t.Errorf("label %d holds classes %d and %d", label, prev, c)
		}
		classOf[label] = c
		if seen[[2]int{c, j}] {
			t.Errorf("image %d of class %d drawn twice", j, c)
		}
		seen[[2]int{c, j}] = true
		for yy := range 32 {
			for xx := range 32 {
				p := pixelOf(2, c, j, xx, yy)
				k := (yy*32 + xx) * 3
				if x[k] != float64(p.R)/255 || x[k+1] != float64(p.G)/255 || x[k+2] != float64(p.B)/255 {
					t.Fatalf("class %d image %d pixel (%d, %d): %v, want %v / 255", c, j, xx, yy, x[k:k+3], p)
				}
			}
		}
	}
	sx, sy, qx, qy := b.Row(0)
	for p := range 5 {
		check(sx[p*in:][:in], sy[p*5:][:5])
	}
	for p := range 75 {
		check(qx[p*in:][:in], qy[p*5:][:5])
	}
	if len(classOf) != 5 || len(seen) != 80 {
		t.Errorf("%d labels and %d images, want 5 and 80", len(classOf), len(seen))
	}
}

// TestNormalize: the per-channel statistics are those of the meta-training
// images alone, and the sampled values are standardised with them.
func TestNormalize(t *testing.T) {
	tr := tree{groups: 3, classes: 5, images: 4, h: 8, w: 6}
	dir := tr.write(t)
	opt := Options{NoCache: true, Section: section(func(s *Config) {
		s.Normalize = true
		s.Splits = SplitLists{Train: []string{"g1", "g2"}, Test: []string{"g3"}}
	})}
	d, err := Load(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq [3]float64
	n := 0.0
	for g := range 2 {
		for c := range 5 {
			for j := range 4 {
				for y := range 8 {
					for x := range 6 {
						p := pixelOf(g, c, j, x, y)
						for ch, v := range []uint8{p.R, p.G, p.B} {
							sum[ch] += float64(v) / 255
							sq[ch] += float64(v) / 255 * float64(v) / 255
						}
						n++
					}
				}
			}
		}
	}
	for ch := range 3 {
		mean := sum[ch] / n
		std := math.Sqrt(sq[ch]/n - mean*mean)
		if math.Abs(d.Mean[ch]-mean) > 1e-12 || math.Abs(d.Std[ch]-std) > 1e-12 {
			t.Errorf("channel %d: mean %v std %v, want %v %v", ch, d.Mean[ch], d.Std[ch], mean, std)
		}
	}
	ts, err := NewTaskSet(d, Test, Spec{Ways: 5, Shots: 1, Queries: 1})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := ts.Dims()
	b := metalearn.NewBatch(1, 5, 5, in, 5)
	ts.Sample(0, rand.New(rand.NewPCG(3, 4)), b, 0)
	x := b.SupportX[:in]
	c := int(math.Round((x[0]*d.Std[0]+d.Mean[0])*255)) - 40*2
	j := int(math.Round((x[1]*d.Std[1]+d.Mean[1])*255)) / 11
	p := pixelOf(2, c, j, 5, 7)
	k := (7*6 + 5) * 3
	if want := (float64(p.B)/255 - d.Mean[2]) / d.Std[2]; math.Abs(x[k+2]-want) > 1e-12 {
		t.Errorf("normalised blue of (5, 7): %v, want %v", x[k+2], want)
	}
}

// TestRotateFlip: the rotations and the flip move every pixel where a
// direct reference puts it, for rectangular flips and square rotations.
func TestRotateFlip(t *testing.T) {
	for _, tc := range []struct {
		h, w, rot int
		flip      bool
	}{{4, 4, 1, false}, {4, 4, 2, true}, {4, 4, 3, false}, {3, 5, 0, true}, {5, 5, 0, false}} {
		d := &Dataset{set: nil}
		ts := &TaskSet{d: d, values: make([][256]float64, 2)}
		for ch := range 2 {
			for v := range 256 {
				ts.values[ch][v] = float64(v) + 1000*float64(ch)
			}
		}
		d.set = newSet(tc.h, tc.w, 2)
		src := d.set.Image(0)
		for i := range src {
			src[i] = uint8(i)
		}
		dst := make([]float64, len(src))
		ts.copyImage(dst, src, tc.rot, tc.flip)
		n := tc.h
		for y := range tc.h {
			for x := range tc.w {
				// Rotate counterclockwise by quarter turns: out(y, x) reads in(x, n-1-y).
				sy, sx := y, x
				if tc.flip {
					sx = tc.w - 1 - sx
				}
				for range tc.rot {
					sy, sx = sx, n-1-sy
				}
				for ch := range 2 {
					want := float64(src[(sy*tc.w+sx)*2+ch]) + 1000*float64(ch)
					if got := dst[(y*tc.w+x)*2+ch]; got != want {
						t.Fatalf("%dx%d rot %d flip %v: out (%d, %d, %d) = %v, want %v", tc.h, tc.w, tc.rot, tc.flip, y, x, ch, got, want)
					}
				}
			}
		}
	}
}

// TestCacheFollowsFiles: a file rewritten after caching (same size, same
// modification time) is decoded afresh, not served from the cache; a
// refused load (a decompression bomb among the files) writes no cache
// and no temporary file, beside the data or in the user cache folder.
func TestCacheFollowsFiles(t *testing.T) {
	dir := tree{groups: 2, classes: 3, images: 3, h: 4, w: 4}.write(t)
	user := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", user)
	opt := Options{Section: section(func(s *Config) {
		s.Ways = 2
		s.Splits = SplitLists{Train: []string{"g1"}, Test: []string{"g2"}}
	})}
	if d, err := Load(dir, opt); err != nil || d.Info.FromCache {
		t.Fatalf("first load: %v", err)
	}
	p := filepath.Join(dir, "g1", className(0, 1), "02.png")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	writeImage(t, p, synthImage(0, 1, 7, 4, 4, false)) // image 7's pixels under image 2's name
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir, opt)
	if err != nil || d.Info.FromCache {
		t.Fatalf("load after the change: %v, from cache %v", err, d != nil && d.Info.FromCache)
	}
	if got, want := d.Image(Train, 0, 1, 2)[:3], pixelOf(0, 1, 7, 0, 0); got[0] != want.R || got[1] != want.G || got[2] != want.B {
		t.Errorf("pixel (0, 0) of the changed file %v, want %v", got, want)
	}

	cache := func() treetest.Tree {
		tree := treetest.Of(t, user)
		for p, entry := range treetest.Of(t, filepath.Join(dir, ".trmaml-cache")) {
			tree[p] = entry
		}
		return tree
	}
	before := cache()
	if err := os.WriteFile(filepath.Join(dir, "g2", className(1, 0), "03.png"), bombPNG(100000, 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, opt); err == nil || !strings.Contains(err.Error(), "03.png: 100000x100000") {
		t.Errorf("load with a bomb: %v", err)
	}
	if diff := before.Diff(cache()); diff != "" {
		t.Errorf("a refused load changed the caches:\n%s", diff)
	}
}

// TestChangedWhileLoading: a file whose content changes between the
// hashing of the files (the cache's key) and its decoding is refused,
// naming it, so that no cache holds one content's pixels under another's
// key (a folder still being copied in, a file edited meanwhile).
func TestChangedWhileLoading(t *testing.T) {
	dir := tree{groups: 2, classes: 3, images: 3, h: 4, w: 4}.write(t)
	s := section(func(s *Config) { s.Ways, s.Splits = 2, SplitLists{Train: []string{"g1"}, Test: []string{"g2"}} })
	l, problems, err := scan(dir, &s)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	var paths, rels []string
	for _, split := range l.splits {
		for _, g := range split {
			for _, c := range g.classes {
				for _, f := range c.files {
					paths, rels = append(paths, f.path), append(rels, f.rel)
				}
			}
		}
	}
	_, sums, err := imagecache.Hash(paths, rels)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeAll(dir, paths, sums, &s); err != nil {
		t.Fatalf("unchanged files: %v", err)
	}
	writeImage(t, paths[4], synthImage(0, 1, 7, 4, 4, false))
	_, err = decodeAll(dir, paths, sums, &s)
	if de, ok := err.(*DataError); !ok || len(de.Problems) != 1 || de.Problems[0].Path != paths[4] || !strings.Contains(de.Problems[0].Rule, "changed while the folder was being read") {
		t.Errorf("decodeAll after a change: %v, want the one problem of %s", err, paths[4])
	}
}

// TestSharedLoadFollowsLayout: the runs of one experiment share a loaded
// dataset only when it is the same: a run whose config splits or groups
// the same folder otherwise, or normalises it, gets its own, not the
// first run's groups or statistics; runs differing in the instances only
// share one.
func TestSharedLoadFollowsLayout(t *testing.T) {
	dir := tree{groups: 4, classes: 3, images: 3, h: 4, w: 4}.write(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	base := func(s *Config) { s.Ways, s.Splits = 2, SplitLists{Train: []string{"g1", "g2"}, Test: []string{"g3"}} }
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   func(*Dataset) bool
	}{
		{"other splits", func(s *Config) { s.Splits.Test = []string{"g4"} }, func(d *Dataset) bool { return slices.Equal(d.Groups(Test), []string{"g4"}) }},
		{"fractions", func(s *Config) { s.Splits, s.Fractions = SplitLists{}, []float64{0.5, 0, 0.5} }, func(d *Dataset) bool { return len(d.Groups(Train)) == 2 && len(d.Groups(Test)) == 2 }},
		{"normalize", func(s *Config) { s.Normalize = true }, func(d *Dataset) bool { return len(d.Mean) == 3 && len(d.Std) == 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := configs.Env{Cache: &configs.DataCache{}}
			first, other := section(base), section(base)
			tc.edit(&other)
			if _, err := loadCached(dir, &first, env); err != nil {
				t.Fatal(err)
			}
			d, err := loadCached(dir, &other, env)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.ok(d) {
				t.Errorf("the second run got the first run's dataset: train %v, test %v, mean %v", d.Groups(Train), d.Groups(Test), d.Mean)
			}
		})
	}
	// Runs that differ in the instances only (ways, augmentation, the
	// noun) share one.
	env := configs.Env{Cache: &configs.DataCache{}}
	first, other := section(base), section(base)
	other.Ways, other.Flip, other.Noun = 3, true, "category"
	d1, err1 := loadCached(dir, &first, env)
	d2, err2 := loadCached(dir, &other, env)
	if err1 != nil || err2 != nil || d1 != d2 {
		t.Errorf("runs differing in ways, flip and noun do not share the dataset (%v, %v)", err1, err2)
	}
}
