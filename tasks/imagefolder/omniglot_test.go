package imagefolder

import (
	"archive/zip"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/omniglottest"
	"github.com/trmaml/trmaml/metalearn"
	omniglot "github.com/trmaml/trmaml/tasks/omniglot/data"
)

// extractOmniglot unpacks the two archives of an Omniglot data root into
// one folder of DIR/ALPHABET/CHARACTER/DRAWING.png, the groups layout.
func extractOmniglot(t testing.TB, root string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range omniglottest.Archives {
		z, err := zip.OpenReader(filepath.Join(root, omniglot.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range z.File {
			if !strings.HasSuffix(f.Name, ".png") {
				continue
			}
			parts := strings.Split(f.Name, "/") // SET/ALPHABET/CHARACTER/FILE
			p := filepath.Join(dir, filepath.Join(parts[len(parts)-3:]...))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err == nil {
				err = os.WriteFile(p, b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		z.Close()
	}
	return dir
}

// sameEpisodes checks that imagefolder over the extracted images, with the
// omniglot family's split and settings, draws the same instances as the
// omniglot family for the same seeds: the same images in the same order
// with the same labels and rotations. Omniglot stores ink (255 - grey) and
// imagefolder the grey as the file has it, so every value of one is 1 minus
// the other's.
func sameEpisodes(t *testing.T, d *omniglot.Dataset, dir string, resize omniglot.Resize, instances int) {
	t.Helper()
	var lists [3][]string
	for _, a := range d.Alphabets() {
		lists[a.Split] = append(lists[a.Split], a.Name)
	}
	f, err := Load(dir, Options{NoCache: true, Section: section(func(s *Config) {
		s.Splits = SplitLists{Train: lists[0], Validation: lists[1], Test: lists[2]}
		s.Channels, s.Image, s.Resize = 1, [2]int{d.Size(), d.Size()}, string(resize)
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range omniglot.Splits {
		for _, rotate := range []bool{false, true} {
			spec := omniglot.Spec{Ways: 5, Shots: 1, Queries: 3, Rotate: rotate}
			om, err := omniglot.NewTaskSet(d, split, spec)
			if err != nil {
				t.Fatal(err)
			}
			im, err := NewTaskSet(f, Split(split), Spec{Ways: 5, Shots: 1, Queries: 3, Rotate: rotate})
			if err != nil {
				t.Fatal(err)
			}
			if om.Len() != im.Len() {
				t.Fatalf("%s: %d alphabets, %d groups", split, om.Len(), im.Len())
			}
			for i := range om.Len() {
				if om.Name(i) != im.Name(i) || om.Mass(i) != im.Mass(i) {
					t.Fatalf("%s task %d: %s mass %v, %s mass %v", split, i, om.Name(i), om.Mass(i), im.Name(i), im.Mass(i))
				}
			}
			in, out := om.Dims()
			if in2, out2 := im.Dims(); in != in2 || out != out2 {
				t.Fatalf("dims %d, %d and %d, %d", in, out, in2, out2)
			}
			bo, bi := metalearn.NewBatch(1, 5, 15, in, out), metalearn.NewBatch(1, 5, 15, in, out)
			for k := range instances {
				task := k % om.Len()
				om.Sample(task, rand.New(rand.NewPCG(uint64(k), 7)), bo, 0)
				im.Sample(task, rand.New(rand.NewPCG(uint64(k), 7)), bi, 0)
				for _, pair := range [][2][]float64{{bo.SupportX, bi.SupportX}, {bo.QueryX, bi.QueryX}} {
					for p, v := range pair[0] {
						if math.Abs(v+pair[1][p]-1) > 1e-12 {
							t.Fatalf("%s rotate %v instance %d: value %d is %v in omniglot, %v in imagefolder", split, rotate, k, p, v, pair[1][p])
						}
					}
				}
				for _, pair := range [][2][]float64{{bo.SupportY, bi.SupportY}, {bo.QueryY, bi.QueryY}} {
					for p, v := range pair[0] {
						if v != pair[1][p] {
							t.Fatalf("%s instance %d: label value %d differs", split, k, p)
						}
					}
				}
			}
		}
	}
}

// TestOmniglotSameEpisodesFixture: on the synthetic Omniglot release (any
// clone), with each of the resizes the two families share.
func TestOmniglotSameEpisodesFixture(t *testing.T) {
	fx := omniglottest.WriteFixture(t, 3)
	rel, err := omniglot.Describe(fx.Root)
	if err != nil {
		t.Fatal(err)
	}
	dir := extractOmniglot(t, fx.Root)
	for _, r := range []omniglot.Resize{omniglot.Bilinear, omniglot.Nearest} {
		d, err := omniglot.Load(fx.Root, omniglot.Options{Size: 28, Resize: r, Release: &rel, NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		sameEpisodes(t, d, dir, r, 60)
	}
}

// TestOmniglotSameEpisodes: on the real Omniglot archives (skipped, saying
// how to get them, where they are not).
func TestOmniglotSameEpisodes(t *testing.T) {
	root := omniglottest.Root(t)
	d, err := omniglot.Load(root, omniglot.Options{Size: 28, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	sameEpisodes(t, d, extractOmniglot(t, root), omniglot.Bilinear, 200)
}
