package cli

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeColourFolder writes DIR/gG/gGcC/NN.png: groups x classes x images
// colour side x side PNGs, each distinct.
func writeColourFolder(t testing.TB, groups, classes, images, side int) string {
	t.Helper()
	dir := t.TempDir()
	for g := range groups {
		for c := range classes {
			d := filepath.Join(dir, fmt.Sprintf("g%d", g+1), fmt.Sprintf("g%dc%02d", g+1, c+1))
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for j := range images {
				img := image.NewRGBA(image.Rect(0, 0, side, side))
				for y := range side {
					for x := range side {
						img.SetRGBA(x, y, color.RGBA{uint8(40*g + c), uint8(11*j + x), uint8(7*y + c*x), 255})
					}
				}
				var b bytes.Buffer
				if err := png.Encode(&b, img); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%02d.png", j)), b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dir
}

// TestDataCheck: "trmaml data check DIR -config FILE" describes a folder
// (DIR before or after the flags) and refuses bad calls by name.
func TestDataCheck(t *testing.T) {
	dir := writeColourFolder(t, 3, 5, 4, 8)
	cfg := filepath.Join(t.TempDir(), "folder.yaml")
	os.WriteFile(cfg, []byte(`name: folder
task:
  family: imagefolder
  support: 1
  query: 2
  imagefolder: {ways: 3, splits: {train: [g1, g2], validation: [g3], test: [g3]}}
model: {cnn: {filters: 4, blocks: 2}}
trmaml: {p_lr: 1e-5}
`), 0o644)
	for _, args := range [][]string{{"data", "check", dir, "-config", cfg}, {"data", "check", "-config", cfg, dir}} {
		var out, errOut bytes.Buffer
		err := dispatch(args, &out, &errOut)
		if err == nil || !strings.Contains(out.String(), `task.imagefolder.splits: group "g3" is in validation and in test`) ||
			!strings.Contains(out.String(), "images: 60 files; 60 of 8x8") {
			t.Errorf("%v: %v\n%s", args, err, out.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"data", "check", dir}, "-config FILE is required"},
		{[]string{"data", "check", dir, "-config", "sine_quick"}, `task family "sinusoid" reads no folder`},
		{[]string{"data", "check", dir, "-config", cfg, "extra"}, "unexpected arguments [extra]"},
	} {
		var out, errOut bytes.Buffer
		if err := dispatch(tc.args, &out, &errOut); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}
