package data

import (
	"archive/zip"
	"bytes"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSharedCountsPerSplit(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	want := map[Split][3]int{ // alphabets, characters, images
		Train:      {25, 883, 17660},
		Validation: {5, 81, 1620},
		Test:       {20, 659, 13180},
	}
	for s, w := range want {
		idx := d.AlphabetsOf(s)
		chars, images := 0, 0
		for _, a := range idx {
			chars += d.Characters(a)
			images += d.alphabets[a].Images
			for c := range d.Characters(a) {
				if n := d.Drawings(a, c); n != 20 {
					t.Errorf("%s character %d: %d drawings, want 20", d.alphabets[a].Name, c, n)
				}
			}
		}
		if got := [3]int{len(idx), chars, images}; got != w {
			t.Errorf("%s: %v alphabets, characters, images, want %v", s, got, w)
		}
	}
	// The validation alphabets are the 5 smallest of the background set.
	maxValidation, minTrain := 0, math.MaxInt
	for _, a := range d.AlphabetsOf(Validation) {
		maxValidation = max(maxValidation, d.Characters(a))
	}
	for _, a := range d.AlphabetsOf(Train) {
		minTrain = min(minTrain, d.Characters(a))
	}
	if maxValidation >= minTrain {
		t.Errorf("largest validation alphabet has %d characters, smallest training one %d", maxValidation, minTrain)
	}
	// Row spans: 7.8 MB where dense bytes would take 25.4 MB.
	if d.Images() != 32460 || d.Bytes() > 32460*28*28*4/10 {
		t.Errorf("%d images in %d bytes, want 32460 in at most %d", d.Images(), d.Bytes(), 32460*28*28*4/10)
	}
}

// TestSharedKnownImage checks one image against an independent resize: the
// PNG decoded straight from the archive and shrunk by the tent filter
// written out as a direct 2-D weighted average (draw applies it as two
// separable passes with 16-bit intermediate rounding). The tent's half-width
// is the scale factor 105/28 = 3.75 source pixels, centred on the output
// pixel's centre mapped to source coordinates, (x + 0.5) * 3.75 - 0.5.
// draw rounds to 16 bits and then truncates to 8, so the stored byte may be
// up to one step (1/255) off the exact value.
func TestSharedKnownImage(t *testing.T) {
	t.Parallel()
	d := sharedDataset(t)
	const name = "images_background/Alphabet_of_the_Magi/character01/0709_01.png"
	zr, err := zip.OpenReader(filepath.Join(sharedRoot(t), Dir, "images_background.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	f, err := zr.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	src, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	const n, side = 28, 105
	scale := float64(side) / n
	weight := func(out, in int) float64 {
		center := (float64(out)+0.5)*scale - 0.5
		return math.Max(0, 1-math.Abs(float64(in)-center)/scale)
	}
	a := 0 // Alphabet_of_the_Magi sorts first, character01 and 0709_01 too
	if d.alphabets[a].Name != "Alphabet_of_the_Magi" {
		t.Fatalf("first alphabet is %s", d.alphabets[a].Name)
	}
	got := d.Image(a, 0, 0)
	inkTotal, maxErr := 0.0, 0.0
	for y := range n {
		for x := range n {
			sum, wsum := 0.0, 0.0
			for i := range side {
				for j := range side {
					w := weight(y, i) * weight(x, j)
					if w == 0 {
						continue
					}
					r, _, _, _ := src.At(j, i).RGBA()
					sum += w * (1 - float64(r)/0xffff) // ink 1
					wsum += w
				}
			}
			want := sum / wsum
			inkTotal += want
			maxErr = math.Max(maxErr, math.Abs(float64(got[y*n+x])/255-want))
		}
	}
	if maxErr > 1.0/255+1e-9 {
		t.Errorf("largest pixel error %.5f, more than one 8-bit step", maxErr)
	}
	if inkTotal < 10 {
		t.Errorf("only %.1f ink in the expected image: wrong image?", inkTotal)
	}
	t.Logf("total ink %.2f, largest error %.5f (1/255 = %.5f)", inkTotal, maxErr, 1.0/255)
}

// TestSharedCacheRoundTrip loads the shared data a second time from the
// cache the first load wrote, and checks it is the same dataset.
func TestSharedCacheRoundTrip(t *testing.T) {
	t.Parallel()
	cold := sharedDataset(t)
	if cold.Info.FromCache || cold.Info.CachePath != shared.cachePath {
		t.Fatalf("first load: %+v", cold.Info)
	}
	warm, err := Load(sharedRoot(t), Options{Size: 28, CachePath: shared.cachePath})
	if err != nil {
		t.Fatal(err)
	}
	if !warm.Info.FromCache {
		t.Fatalf("second load did not use the cache: %s", warm.Info.Rebuilt)
	}
	t.Logf("cold: hash %v, decode %v; warm: hash %v, cache read %v", cold.Info.HashTime, cold.Info.LoadTime, warm.Info.HashTime, warm.Info.LoadTime)
	sameDataset(t, warm, cold)
	// Another size is another key.
	if _, err := readCache(shared.cachePath, cacheKey{ContentSHA256, 14, Bilinear.cacheFilter(), pipelineVersion}); err == nil || !strings.Contains(err.Error(), "was built from") {
		t.Errorf("reading the 28x28 cache as 14x14: %v", err)
	}
}

func sameDataset(t *testing.T, got, want *Dataset) {
	t.Helper()
	if got.size != want.size || !got.store.equal(want.store) ||
		len(got.alphabets) != len(want.alphabets) || !equalInts(got.charFirst, want.charFirst) || !equalInts(got.imageFirst, want.imageFirst) {
		t.Fatal("datasets differ")
	}
	for i := range got.alphabets {
		if got.alphabets[i] != want.alphabets[i] {
			t.Fatalf("alphabet %d: %+v, want %+v", i, got.alphabets[i], want.alphabets[i])
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCacheInvalidation walks a small synthetic release through the cache's
// life: written on the first load, used on the second, rebuilt when the
// size, the content or the cache file itself changes.
func TestCacheInvalidation(t *testing.T) {
	t.Parallel()
	s := writeSynthetic(t, []int{3, 2}, 4, 1)
	cache := filepath.Join(s.root, Dir, CacheName)
	load := func(size int, wantCached bool, why string) *Dataset {
		t.Helper()
		d, err := s.load(Options{Size: size})
		if err != nil {
			t.Fatal(err)
		}
		if d.Info.CacheErr != nil || d.Info.CachePath != cache {
			t.Fatalf("cache %s: %v", d.Info.CachePath, d.Info.CacheErr)
		}
		if d.Info.FromCache != wantCached || !strings.Contains(d.Info.Rebuilt, why) {
			t.Fatalf("from cache %v (rebuilt: %q), want %v (%q)", d.Info.FromCache, d.Info.Rebuilt, wantCached, why)
		}
		return d
	}
	first := load(12, false, "no cache file")
	sameDataset(t, load(12, true, ""), first)

	load(10, false, "was built from") // size changed
	load(10, true, "")

	// Change one image: the content hash (and so the key) changes.
	path := filepath.Join(s.root, Dir, filepath.FromSlash(s.paths[2]))
	before, _ := os.ReadFile(path)
	writePNG(t, path, newRand(99))
	s.sum = sumFiles(t, filepath.Join(s.root, Dir), s.paths)
	s.set.sha256 = s.sum
	changed := load(10, false, "was built from")
	if bytes.Equal(before, mustReadFile(t, path)) {
		t.Fatal("the image did not change")
	}
	d10 := load(10, true, "")
	sameDataset(t, d10, changed)

	// A damaged cache is rebuilt, not trusted.
	raw := mustReadFile(t, cache)
	raw[len(raw)/2] ^= 0xff
	if err := os.WriteFile(cache, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	sameDataset(t, load(10, false, "damaged"), changed)
	if err := os.WriteFile(cache, raw[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	sameDataset(t, load(10, false, "cache"), changed)
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestZipAndFolderAgree loads the synthetic release from its folders and
// from a zip of them: the same dataset and content hash.
func TestZipAndFolderAgree(t *testing.T) {
	t.Parallel()
	s := writeSynthetic(t, []int{2, 3}, 3, 2)
	fromFolder, err := s.load(Options{Size: 7, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	// Write the zip, with a directory entry and macOS debris as real
	// archives have, then hide the folder.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if _, err := zw.Create("images_background/"); err != nil {
		t.Fatal(err)
	}
	if w, err := zw.Create("__MACOSX/images_background/._x.png"); err == nil {
		w.Write([]byte("junk"))
	}
	for _, p := range s.paths {
		w, err := zw.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(mustReadFile(t, filepath.Join(s.root, Dir, filepath.FromSlash(p))))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.root, Dir, "images_background.zip"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(s.root, Dir, "images_background"), filepath.Join(s.root, "hidden")); err != nil {
		t.Fatal(err)
	}
	fromZip, err := s.load(Options{Size: 7, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	sameDataset(t, fromZip, fromFolder)
}

// TestBadDataRoots checks the errors for a missing, partial or corrupt data
// root: each names the place and says how to fetch the data.
func TestBadDataRoots(t *testing.T) {
	t.Parallel()
	shared := sharedRoot(t)
	link := func(t *testing.T, root, name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(shared, Dir, name), filepath.Join(root, Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	copyModified := func(t *testing.T, root, name string, modify func([]byte) []byte) {
		t.Helper()
		raw := mustReadFile(t, filepath.Join(shared, Dir, name))
		if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, Dir, name), modify(bytes.Clone(raw)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		missing bool
		want    []string
	}{
		{"empty root", func(t *testing.T, root string) {}, true,
			[]string{"omniglot does not exist", "images_background.zip", "trmaml data omniglot -dir"}},
		{"one archive", func(t *testing.T, root string) { link(t, root, "images_background.zip") }, true,
			[]string{"images_evaluation: neither", "images_evaluation.zip", "trmaml data omniglot -dir"}},
		{"truncated archive", func(t *testing.T, root string) {
			link(t, root, "images_background.zip")
			copyModified(t, root, "images_evaluation.zip", func(b []byte) []byte { return b[:len(b)/2] })
		}, false, []string{"images_evaluation.zip: not a readable zip archive", "-verify", "trmaml data omniglot -dir"}},
		{"flipped byte", func(t *testing.T, root string) {
			link(t, root, "images_evaluation.zip")
			copyModified(t, root, "images_background.zip", func(b []byte) []byte {
				b[len(b)/2] ^= 0x55 // inside some PNG: its CRC-32 fails
				return b
			})
		}, false, []string{"images_background.zip", "checksum error", "trmaml data omniglot -dir"}},
		{"sets swapped", func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
				t.Fatal(err)
			}
			os.Symlink(filepath.Join(shared, Dir, "images_background.zip"), filepath.Join(root, Dir, "images_evaluation.zip"))
			link(t, root, "images_background.zip")
		}, false, []string{"images_evaluation.zip: no PNG files under images_evaluation/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.setup(t, root)
			_, err := Load(root, Options{Size: 28, NoCache: true})
			if err == nil {
				t.Fatal("loaded")
			}
			if errors.Is(err, ErrMissing) != tt.missing {
				t.Errorf("errors.Is(err, ErrMissing) = %v", !tt.missing)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if verr := Verify(root); verr == nil || verr.Error() != err.Error() {
				t.Errorf("Verify: %v", verr)
			}
		})
	}
}

// TestContentMismatch: a release whose PNGs all read fine but differ from
// the published ones is refused by its hash, naming the set.
func TestContentMismatch(t *testing.T) {
	t.Parallel()
	s := writeSynthetic(t, []int{2}, 2, 3)
	_, err := load(s.root, Options{Size: 5, NoCache: true}, []set{{"images_background", 2, 4, strings.Repeat("0", 64)}}, strings.Repeat("1", 64))
	if err == nil || !strings.Contains(err.Error(), "images_background/: content SHA-256 "+s.sum) {
		t.Errorf("got %v", err)
	}
	_, err = load(s.root, Options{Size: 5, NoCache: true}, []set{{"images_background", 3, 4, s.sum}}, s.sum)
	if err == nil || !strings.Contains(err.Error(), "2 characters and 4 images, want 3 and 4") {
		t.Errorf("got %v", err)
	}
}

func TestLoadRefusesSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, -1, maxSize + 1} {
		if _, err := Load(t.TempDir(), Options{Size: size}); err == nil || !strings.Contains(err.Error(), "image size") {
			t.Errorf("size %d: %v", size, err)
		}
	}
}
