package imagefolder

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/data/imagecache"
)

// pixelOf is the synthetic colour of pixel (x, y) of image j of class c of
// group g: every image is distinct and every pixel says where it is from.
func pixelOf(g, c, j, x, y int) color.RGBA {
	return color.RGBA{uint8(40*g + c), uint8(11*j + x), uint8(7*y + c), 255}
}

// synthImage is an h x w image made of pixelOf, colour or grey.
func synthImage(g, c, j, h, w int, grey bool) image.Image {
	if grey {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				img.SetGray(x, y, color.Gray{pixelOf(g, c, j, x, y).G})
			}
		}
		return img
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, pixelOf(g, c, j, x, y))
		}
	}
	return img
}

func writeImage(t testing.TB, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	var err error
	if strings.HasSuffix(path, ".jpg") {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree is a synthetic DIR/GROUP/CLASS/IMAGE folder: groups g1.. of classes
// c1.. of images NN.png, h x w colour unless grey.
type tree struct {
	groups, classes, images, h, w int
	grey                          bool
}

func (tr tree) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for g := range tr.groups {
		for c := range tr.classes {
			for j := range tr.images {
				writeImage(t, filepath.Join(dir, groupName(g), className(g, c), fmt.Sprintf("%02d.png", j)), synthImage(g, c, j, tr.h, tr.w, tr.grey))
			}
		}
	}
	return dir
}

func groupName(g int) string    { return fmt.Sprintf("g%d", g+1) }
func className(g, c int) string { return fmt.Sprintf("g%dc%02d", g+1, c+1) }

// section is the defaults with the changes of edit.
func section(edit func(*Config)) Config {
	s := *Family{}.NewSection().(*Config)
	if edit != nil {
		edit(&s)
	}
	return s
}

// listing is every path under dir with its size, to show that a refused
// load wrote nothing (the cache folder aside).
func listing(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Name() == ".trmaml-cache" {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err == nil {
			out = append(out, fmt.Sprintf("%s %d", p, fi.Size()))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func newSet(h, w, c int) *imagecache.Set {
	return &imagecache.Set{H: h, W: w, C: c, Pix: make([]uint8, h*w*c)}
}
