package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/trmaml/trmaml/internal/omniglottest"
)

// sharedRoot is the data root of the real Omniglot archives
// (omniglottest.Root: the test skips when the machine has none).
func sharedRoot(t testing.TB) string {
	t.Helper()
	return omniglottest.Root(t)
}

var shared struct {
	once      sync.Once
	d         *Dataset
	err       error
	cacheDir  string
	cachePath string
}

// sharedDataset is the shared data at 28x28, decoded once per test binary
// with its cache written to a temporary directory (the shared root is
// read-only).
func sharedDataset(t testing.TB) *Dataset {
	t.Helper()
	root := sharedRoot(t)
	shared.once.Do(func() {
		shared.cacheDir, shared.err = os.MkdirTemp("", "omniglot-cache")
		if shared.err != nil {
			return
		}
		shared.cachePath = filepath.Join(shared.cacheDir, CacheName)
		shared.d, shared.err = Load(root, Options{Size: 28, CachePath: shared.cachePath})
		if shared.err == nil && shared.d.Info.CacheErr != nil {
			shared.err = shared.d.Info.CacheErr
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cacheDir != "" {
		os.RemoveAll(shared.cacheDir)
	}
	os.Exit(code)
}

// synthetic describes a small fake release written as extracted folders:
// alphabets[a] characters of drawings images each, random binary 105x105
// PNGs, all in images_background.
type synthetic struct {
	root     string
	set      set
	sum      string
	paths    []string // sorted
	alphabet []string
}

func writeSynthetic(t *testing.T, characters []int, drawings int, seed uint64) *synthetic {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(seed, 1))
	s := &synthetic{root: root}
	images := 0
	for a, z := range characters {
		name := fmt.Sprintf("Alphabet%02d", a)
		s.alphabet = append(s.alphabet, name)
		for c := range z {
			for j := range drawings {
				rel := fmt.Sprintf("images_background/%s/character%02d/%04d_%02d.png", name, c+1, a*100+c+1, j+1)
				writePNG(t, filepath.Join(root, Dir, rel), rng)
				s.paths = append(s.paths, rel)
				images++
			}
		}
	}
	slices.Sort(s.paths)
	s.sum = sumFiles(t, filepath.Join(root, Dir), s.paths)
	total := 0
	for _, z := range characters {
		total += z
	}
	s.set = set{name: "images_background", characters: total, images: images, sha256: s.sum}
	return s
}

// writePNG writes a 105x105 1-bit-like grayscale PNG: white background with
// random black blocks of ink.
func writePNG(t *testing.T, path string, rng *rand.Rand) {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, sourceSide, sourceSide))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for range 6 {
		x0, y0 := rng.IntN(95), rng.IntN(95)
		for y := y0; y < y0+10; y++ {
			for x := x0; x < x0+3; x++ {
				img.SetGray(x, y, color.Gray{0})
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sumFiles is the content hash computed the plain way: read every file in
// the given (sorted) order and hash the concatenation.
func sumFiles(t *testing.T, dir string, paths []string) string {
	t.Helper()
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (s *synthetic) load(opt Options) (*Dataset, error) {
	return load(s.root, opt, []set{s.set}, s.sum)
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 2)) }
