package imagefolder

import (
	"fmt"
	"image"
	"path/filepath"
	"testing"

	"github.com/trmaml/trmaml/data/imagecache"
	_ "github.com/trmaml/trmaml/models/builtin" // the built-in models, which configs name
	"github.com/trmaml/trmaml/tasks/imagefolder/imagefoldertest"
)

// pixelOf, synthImage: the synthetic images of imagefoldertest.
var (
	pixelOf    = imagefoldertest.Pixel
	synthImage = imagefoldertest.Image
)

func writeImage(t testing.TB, path string, img image.Image) {
	t.Helper()
	if err := imagefoldertest.WriteImage(path, img); err != nil {
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

func newSet(h, w, c int) *imagecache.Set {
	return &imagecache.Set{H: h, W: w, C: c, Pix: make([]uint8, h*w*c)}
}
