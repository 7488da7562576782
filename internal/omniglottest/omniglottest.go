package omniglottest

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/png"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// EnvData names a data root holding omniglot/images_background.zip and
// omniglot/images_evaluation.zip (as `trmaml data omniglot -dir DIR`
// writes them). Without it, Root looks in ../shared/data beside the module
// root.
const EnvData = "TRMAML_TEST_DATA"

// EnvRequire, set to 1, turns Root's skip into a failure: CI (.ci/run) sets
// it so that the real-data tests cannot silently stop running.
const EnvRequire = "TRMAML_REQUIRE_DATA"

// Archives are the two files of the release, in the omniglot/ folder of a
// data root.
var Archives = []string{"images_background.zip", "images_evaluation.zip"}

// Root returns the data root of the real Omniglot archives: $TRMAML_TEST_DATA
// if set, else ../shared/data beside the module root (the directory with
// go.mod). When the archives are not there the test is skipped with one line
// naming the test, where Root looked and how to get the data, or fails if
// $TRMAML_REQUIRE_DATA is 1. With -short it skips without looking.
func Root(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real Omniglot archives (skipped with -short)")
	}
	root, where := os.Getenv(EnvData), "$"+EnvData
	if root == "" {
		mod, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		root, where = filepath.Join(filepath.Dir(mod), "shared", "data"), "../shared/data beside the module root"
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Archives {
		if _, err := os.Stat(filepath.Join(root, "omniglot", a)); err != nil {
			msg := fmt.Sprintf("%s: real Omniglot archives not found: no %s (looked in %s); get them with `trmaml data omniglot -dir DIR` and set %s=DIR",
				t.Name(), filepath.Join(root, "omniglot", a), where, EnvData)
			if os.Getenv(EnvRequire) == "1" {
				t.Fatalf("%s (%s=1 makes this a failure)", msg, EnvRequire)
			}
			t.Skip(msg)
		}
	}
	return root
}

// moduleRoot is the nearest directory at or above the working directory
// (a test's package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

// An Alphabet of the fixture: a real alphabet's name (so that the fixed
// validation split applies) with fewer characters.
type Alphabet struct {
	Set        string // "images_background" or "images_evaluation"
	Name       string
	Characters int
}

// FixtureAlphabets are the alphabets WriteFixture writes, in sorted path
// order: three meta-training alphabets and one validation alphabet in
// images_background, two meta-test alphabets in images_evaluation, each
// with at least 5 characters so that 5-way instances exist.
var FixtureAlphabets = []Alphabet{
	{"images_background", "Alphabet_of_the_Magi", 5}, // validation
	{"images_background", "Anglo-Saxon_Futhorc", 6},
	{"images_background", "Braille", 5},
	{"images_background", "Tifinagh", 7},
	{"images_evaluation", "Angelic", 5},
	{"images_evaluation", "Tengwar", 6},
}

// Drawings is the number of drawings of every character, as in Omniglot.
const Drawings = 20

// Side is the side of every PNG, as in Omniglot.
const Side = 105

// Set is what the fixture wrote for one archive, counted and hashed
// independently of tasks/omniglot/data: the SHA-256 of the set's PNG files
// concatenated in byte-wise sorted path order, the release's definition.
type Set struct {
	Characters, Images int
	SHA256             string
}

// A Fixture is a synthetic Omniglot data root.
type Fixture struct {
	Root                   string // holds omniglot/images_background.zip and images_evaluation.zip
	Background, Evaluation Set
	SHA256                 string // of both sets' PNGs in sorted path order
}

// WriteFixture writes the synthetic release under a new temporary data
// root: FixtureAlphabets with Drawings drawings per character, as
// SET/ALPHABET/characterNN/NNNN_MM.png (NNNN counts characters across the
// archives from 0001, MM the drawer) in two zip archives with their folder
// entries, like the real ones. Every character is a few random strokes and
// every drawing a jittered copy of them, 105x105 grayscale, ink 0 on 255.
// The same seed writes the same bytes. The archives total about 460 KB.
func WriteFixture(t testing.TB, seed uint64) *Fixture {
	t.Helper()
	fx := &Fixture{Root: t.TempDir()}
	dir := filepath.Join(fx.Root, "omniglot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x0b1))
	all := sha256.New()
	char := 0
	for _, set := range []string{"images_background", "images_evaluation"} {
		files := map[string][]byte{}
		var s Set
		for _, a := range FixtureAlphabets {
			if a.Set != set {
				continue
			}
			for c := range a.Characters {
				char++
				strokes := randomStrokes(rng)
				for d := range Drawings {
					p := fmt.Sprintf("%s/%s/character%02d/%04d_%02d.png", set, a.Name, c+1, char, d+1)
					files[p] = drawPNG(t, strokes, rng)
					s.Images++
				}
				s.Characters++
			}
		}
		paths := slices.Sorted(maps.Keys(files))
		h := sha256.New()
		for _, p := range paths {
			h.Write(files[p])
			all.Write(files[p])
		}
		s.SHA256 = hex.EncodeToString(h.Sum(nil))
		writeZip(t, filepath.Join(dir, set+".zip"), paths, files)
		if set == "images_background" {
			fx.Background = s
		} else {
			fx.Evaluation = s
		}
	}
	fx.SHA256 = hex.EncodeToString(all.Sum(nil))
	return fx
}

// A stroke is a thick line segment in [0, 1)^2 coordinates.
type stroke struct{ x0, y0, x1, y1 float64 }

func randomStrokes(rng *rand.Rand) []stroke {
	s := make([]stroke, 2+rng.IntN(3))
	for i := range s {
		s[i] = stroke{0.15 + 0.7*rng.Float64(), 0.15 + 0.7*rng.Float64(), 0.15 + 0.7*rng.Float64(), 0.15 + 0.7*rng.Float64()}
	}
	return s
}

// encoder reuses its compressor across the fixture's images (a flate
// writer is about a megabyte to set up).
var encoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &bufferPool{}}

type bufferPool struct{ p sync.Pool }

func (p *bufferPool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}
func (p *bufferPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

// drawPNG renders the strokes, each end moved by up to 4 pixels, as a
// white Side x Side PNG with black ink 3 pixels wide.
func drawPNG(t testing.TB, strokes []stroke, rng *rand.Rand) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, Side, Side))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	jitter := func(v float64) float64 { return v*Side + 8*rng.Float64() - 4 }
	for _, s := range strokes {
		x0, y0, x1, y1 := jitter(s.x0), jitter(s.y0), jitter(s.x1), jitter(s.y1)
		const steps = 2 * Side
		for k := range steps + 1 {
			f := float64(k) / steps
			cx, cy := int(x0+f*(x1-x0)), int(y0+f*(y1-y0))
			for y := cy - 1; y <= cy+1; y++ {
				for x := cx - 1; x <= cx+1; x++ {
					if x >= 0 && x < Side && y >= 0 && y < Side {
						img.Pix[y*img.Stride+x] = 0
					}
				}
			}
		}
	}
	var b bytes.Buffer
	if err := encoder.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeZip stores the files under their paths, each folder entry before its
// contents, as the released archives do.
func writeZip(t testing.TB, path string, paths []string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	dirs := map[string]bool{}
	for _, p := range paths {
		for i := range len(p) {
			if p[i] == '/' && !dirs[p[:i+1]] {
				dirs[p[:i+1]] = true
				if _, err := zw.Create(p[:i+1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		w, err := zw.Create(p)
		if err == nil {
			_, err = w.Write(files[p])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
