package data

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"runtime"
	"sync"

	"golang.org/x/image/draw"
)

// sourceSide is the side of every Omniglot PNG.
const sourceSide = 105

// pipelineVersion is part of the cache key with the resize: change it when
// the decoding or the stored layout changes.
const pipelineVersion = 2 // 2: row spans (store.go) instead of dense pixels

// newLayout builds a Dataset's index arrays from the sorted sources, with
// no pixels yet.
func newLayout(srcs []*source, size int) *Dataset {
	d := &Dataset{size: size, charFirst: []int{0}, imageFirst: []int{0}}
	for _, src := range srcs {
		d.alphabets = append(d.alphabets, alphabetsOf(src)...)
		prev := ""
		for _, im := range src.images {
			key := im.alphabet + "/" + im.character
			if key != prev {
				d.imageFirst = append(d.imageFirst, d.imageFirst[len(d.imageFirst)-1])
				prev = key
			}
			d.imageFirst[len(d.imageFirst)-1]++
		}
	}
	for _, a := range d.alphabets {
		d.charFirst = append(d.charFirst, d.charFirst[len(d.charFirst)-1]+a.Characters)
	}
	return d
}

// decodeAll decodes and resizes every image of the sources, on as many
// goroutines as there are CPUs.
func decodeAll(srcs []*source, size int, resize Resize) (*Dataset, error) {
	d := newLayout(srcs, size)
	var all []pngFile
	for _, src := range srcs {
		all = append(all, src.images...)
	}
	encoded := make([][]byte, len(all))

	workers := min(runtime.GOMAXPROCS(0), len(all))
	next := make(chan int, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newResizer(resize, size)
			img := make([]uint8, size*size)
			for k := range next {
				if errs[w] != nil {
					continue // drain
				}
				if errs[w] = r.decode(all[k], img); errs[w] == nil {
					encoded[k] = storedSpans(nil, img, size)
				}
			}
		}()
	}
	for k := range all {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	d.store = newImageStore(size, encoded)
	return d, nil
}

// resizer decodes PNGs and shrinks them; one per goroutine.
type resizer struct {
	shrinker shrinker
	gray     *image.Gray
	buf      bytes.Buffer
}

func newResizer(resize Resize, size int) *resizer {
	return &resizer{
		shrinker: newShrinker(resize, size),
		gray:     image.NewGray(image.Rect(0, 0, sourceSide, sourceSide)),
	}
}

// decode writes the ink of im, resized, into out: 255 - gray, so ink 255
// and background 0.
func (r *resizer) decode(im pngFile, out []uint8) error {
	r.buf.Reset()
	if err := copyImage(&r.buf, im, nil); err != nil {
		return err
	}
	src, err := png.Decode(&r.buf)
	if err != nil {
		return fmt.Errorf("%s: %w", im.path, err)
	}
	b := src.Bounds()
	if b.Dx() != sourceSide || b.Dy() != sourceSide {
		return fmt.Errorf("%s: %dx%d image, want %dx%d", im.path, b.Dx(), b.Dy(), sourceSide, sourceSide)
	}
	gray, ok := src.(*image.Gray)
	if !ok || b.Min != (image.Point{}) {
		draw.Draw(r.gray, r.gray.Bounds(), src, b.Min, draw.Src)
		gray = r.gray
	}
	r.shrinker.shrink(gray, out)
	for i, v := range out {
		out[i] = 255 - v
	}
	return nil
}
