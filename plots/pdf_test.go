package plots

import (
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestPDFTranslucentColours: a translucent fill in a PDF figure, as
// poppler's pdftoppm rasterises it, has the colour the PNG canvas draws.
// vgpdf alone drew it from alpha-premultiplied channels: the 30% blue band
// of a confidence interval came out grey. The cases are the bands' and
// histograms' alphas over white; the tolerance allows for the two
// rasterisers' rounding. Skipped without pdftoppm (Debian's
// poppler-utils) unless TRMAML_REQUIRE_PDFTOPPM=1 (CI installs it).
func TestPDFTranslucentColours(t *testing.T) {
	t.Parallel()
	pdftoppm, err := exec.LookPath("pdftoppm")
	if err != nil {
		if os.Getenv("TRMAML_REQUIRE_PDFTOPPM") == "1" {
			t.Fatal("pdftoppm not found (apt-get install poppler-utils)")
		}
		t.Skip("pdftoppm not found (Debian's poppler-utils); TRMAML_REQUIRE_PDFTOPPM=1 makes this a failure")
	}
	for _, c := range []struct {
		name  string
		col   color.RGBA
		alpha float64
	}{
		{"MAML band", methodStyles["maml"].col, 0.3},
		{"TR-MAML histogram", methodStyles["trmaml"].col, 0.6},
		{"opaque", methodStyles["maml"].col, 1},
	} {
		dir := t.TempDir()
		draw := func(path string) {
			p := newPanel("", "", "")
			p.HideAxes()
			fill, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}, {X: 0, Y: 1}})
			if err != nil {
				t.Fatal(err)
			}
			fill.Color, fill.LineStyle.Width = faded(c.col, c.alpha), 0
			p.Add(fill)
			if err := renderGrid(path, 72, 72, 1, nil, []*plot.Plot{p}); err != nil {
				t.Fatal(err)
			}
		}
		draw(filepath.Join(dir, "f.png"))
		draw(filepath.Join(dir, "f.pdf"))
		if out, err := exec.Command(pdftoppm, "-r", strconv.Itoa(DPI), "-png", "-singlefile", filepath.Join(dir, "f.pdf"), filepath.Join(dir, "pdf")).CombinedOutput(); err != nil {
			t.Fatalf("%s: pdftoppm: %v\n%s", c.name, err, out)
		}
		want, got := centre(t, filepath.Join(dir, "f.png")), centre(t, filepath.Join(dir, "pdf.png"))
		for i, ch := range []string{"red", "green", "blue"} {
			if d := int(got[i]) - int(want[i]); d < -3 || d > 3 {
				t.Errorf("%s: PDF pixel %v, PNG pixel %v: %s differs by %d", c.name, got, want, ch, d)
				break
			}
		}
	}
}

// centre is the colour of the pixel at the centre of a PNG file.
func centre(t *testing.T, path string) [3]uint8 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	c := color.NRGBAModel.Convert(img.At((b.Min.X+b.Max.X)/2, (b.Min.Y+b.Max.Y)/2)).(color.NRGBA)
	return [3]uint8{c.R, c.G, c.B}
}
