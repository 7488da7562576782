package data

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"
)

// TestResizeMatchesPillow checks the Lanczos and Nearest resizes byte for
// byte against Pillow 9.4's own output (testdata/pillow, made by gen.py
// there from 1-bit stroke images like Omniglot's), at two sizes.
func TestResizeMatchesPillow(t *testing.T) {
	t.Parallel()
	for _, r := range []Resize{Lanczos, Nearest} {
		for _, size := range []int{28, 14} {
			for i := range 3 {
				name := fmt.Sprintf("in%d_%s%d", i, r, size)
				t.Run(name, func(t *testing.T) {
					src := readGray(t, fmt.Sprintf("in%d.png", i))
					want := readGray(t, name+".png")
					got := make([]uint8, size*size)
					newShrinker(r, size).shrink(src, got)
					diff := 0
					for p := range got {
						if got[p] != want.Pix[p] {
							diff++
						}
					}
					if diff > 0 {
						t.Errorf("%d of %d pixels differ from Pillow's", diff, len(got))
					}
				})
			}
		}
	}
}

// TestResizeThinStroke shows why the resize matters on Omniglot: a
// one-pixel vertical stroke between Nearest's sample columns vanishes,
// while Bilinear and Lanczos keep its ink in every row.
func TestResizeThinStroke(t *testing.T) {
	t.Parallel()
	src := image.NewGray(image.Rect(0, 0, sourceSide, sourceSide))
	for p := range src.Pix {
		src.Pix[p] = 255
	}
	for y := range sourceSide {
		src.Pix[y*src.Stride+3] = 0 // Nearest at 28 reads columns 1, 5, 9, ...
	}
	for _, tc := range []struct {
		r       Resize
		visible bool
	}{{Bilinear, true}, {Lanczos, true}, {Nearest, false}} {
		out := make([]uint8, 28*28)
		newShrinker(tc.r, 28).shrink(src, out)
		darkest := uint8(255)
		for _, v := range out {
			darkest = min(darkest, v)
		}
		if visible := darkest <= 230; visible != tc.visible {
			t.Errorf("%s: darkest pixel %d, stroke visible %v, want %v", tc.r, darkest, visible, tc.visible)
		}
	}
}

func TestParseResize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Resize
		ok   bool
	}{{"", Bilinear, true}, {"bilinear", Bilinear, true}, {"lanczos", Lanczos, true}, {"nearest", Nearest, true}, {"bicubic", "", false}} {
		got, err := ParseResize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseResize(%q) = %q, %v", tc.in, got, err)
		}
	}
}

func readGray(t *testing.T, name string) *image.Gray {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "pillow", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	g := image.NewGray(im.Bounds())
	draw.Draw(g, g.Bounds(), im, im.Bounds().Min, draw.Src)
	return g
}
