package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// equal reports whether two stores hold the same encoding.
func (s *imageStore) equal(o *imageStore) bool {
	return s.size == o.size && slices.Equal(s.off, o.off) && slices.Equal(s.data, o.data)
}

// storeCases are images that exercise the spans' edges: empty and full
// rows, ink in the first and last columns, interior background, and sizes
// whose columns need two-byte varints.
func storeCases(rng *rand.Rand) []struct {
	name string
	size int
	img  []uint8
} {
	random := func(size int, ink float64) []uint8 {
		img := make([]uint8, size*size)
		for p := range img {
			if rng.Float64() < ink {
				img[p] = uint8(1 + rng.IntN(255))
			}
		}
		return img
	}
	corners := make([]uint8, 9)
	corners[0], corners[8] = 255, 7
	full := slices.Repeat([]uint8{200}, 28*28)
	return []struct {
		name string
		size int
		img  []uint8
	}{
		{"empty 1x1", 1, []uint8{0}},
		{"ink 1x1", 1, []uint8{9}},
		{"corners 3x3", 3, corners},
		{"empty 28x28", 28, make([]uint8, 28*28)},
		{"full 28x28", 28, full},
		{"sparse 28x28", 28, random(28, 0.2)},
		{"dense 28x28", 28, random(28, 0.9)},
		{"sparse 300x300", 300, random(300, 0.01)},
		{"dense 300x300", 300, random(300, 0.7)},
	}
}

func TestImageStoreRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range storeCases(rng) {
		t.Run(c.name, func(t *testing.T) {
			// Three copies in one store, the middle one empty, so offsets
			// and decoding past the first image are exercised.
			enc := [][]byte{storedSpans(nil, c.img, c.size), storedSpans(nil, make([]uint8, c.size*c.size), c.size), storedSpans(nil, c.img, c.size)}
			if c.size < 128 && len(enc[1]) != 2*c.size { // one-byte column and length
				t.Errorf("an empty image takes %d bytes, want %d", len(enc[1]), 2*c.size)
			}
			s := newImageStore(c.size, enc)
			parsed, err := parseImageStore(c.size, 3, s.data)
			if err != nil || !parsed.equal(s) {
				t.Fatalf("parse: %v, same store %v", err, err == nil && parsed.equal(s))
			}
			got := slices.Repeat([]uint8{42}, c.size*c.size) // decode must overwrite all
			for k, want := range [][]uint8{c.img, make([]uint8, c.size*c.size), c.img} {
				s.decode(k, got)
				if !slices.Equal(got, want) {
					t.Fatalf("image %d decodes differently", k)
				}
			}
			if s.images() != 3 || s.bytes() < len(s.data)+8*4 {
				t.Errorf("%d images in %d bytes", s.images(), s.bytes())
			}
		})
	}
}

// TestImageStoreRejectsDamage checks that truncated, extended or altered
// encodings are refused by parseImageStore, or, when an alteration still
// encodes valid spans, decode without indexing out of range.
func TestImageStoreRejectsDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range storeCases(rng) {
		good := newImageStore(c.size, [][]byte{storedSpans(nil, c.img, c.size), storedSpans(nil, c.img, c.size)}).data
		if _, err := parseImageStore(c.size, 2, good[:len(good)-1]); err == nil {
			t.Errorf("%s: truncated store accepted", c.name)
		}
		if _, err := parseImageStore(c.size, 2, append(slices.Clone(good), 0)); err == nil {
			t.Errorf("%s: store with a trailing byte accepted", c.name)
		}
		if _, err := parseImageStore(c.size, 3, good); err == nil {
			t.Errorf("%s: store read as one image more accepted", c.name)
		}
		if _, err := parseImageStore(c.size+1, 2, good); err == nil {
			t.Errorf("%s: store read with the wrong size accepted", c.name)
		}
		for _, count := range []int{1 << 46, math.MaxInt} { // a damaged header's count: an error, not a panic
			if _, err := parseImageStore(c.size, count, good); err == nil {
				t.Errorf("%s: %d images accepted", c.name, count)
			}
		}
		dst := make([]uint8, c.size*c.size)
		for range 200 {
			bad := slices.Clone(good)
			bad[rng.IntN(len(bad))] = uint8(rng.IntN(256))
			if s, err := parseImageStore(c.size, 2, bad); err == nil {
				s.decode(0, dst)
				s.decode(1, dst)
			}
		}
	}
}

// FuzzParseImageStore: whatever the bytes of a cache file's image part,
// parseImageStore returns an error or a store whose every image decodes
// and rotates without indexing out of range, to the same pixels either way.
func FuzzParseImageStore(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 7))
	for _, c := range storeCases(rng) {
		if c.size <= 28 {
			f.Add(c.size, 2, newImageStore(c.size, [][]byte{storedSpans(nil, c.img, c.size), storedSpans(nil, c.img, c.size)}).data)
		}
	}
	f.Fuzz(func(t *testing.T, size, count int, data []byte) {
		if size < 1 || size > 64 {
			return
		}
		s, err := parseImageStore(size, count, data)
		if err != nil {
			return
		}
		ts := &TaskSet{d: &Dataset{size: size}}
		for v := range ts.ink {
			ts.ink[v] = float64(v)
		}
		img, x := make([]uint8, size*size), make([]float64, size*size)
		for k := range s.images() {
			s.decode(k, img)
			ts.copyRotated(x, s.encoded(k), 0)
			for p, v := range img {
				if x[p] != float64(v) {
					t.Fatalf("image %d pixel %d: decoded %d, copied %v", k, p, v, x[p])
				}
			}
			for rot := 1; rot < 4; rot++ {
				ts.copyRotated(x, s.encoded(k), rot)
			}
		}
	})
}
