package imagefolder

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/tiff"
)

// encoded is img in the format of encode.
func encoded(t *testing.T, img image.Image, encode func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func pngOf(b *bytes.Buffer, img image.Image) error  { return png.Encode(b, img) }
func gifOf(b *bytes.Buffer, img image.Image) error  { return gif.Encode(b, img, nil) }
func tiffOf(b *bytes.Buffer, img image.Image) error { return tiff.Encode(b, img, nil) }

// TestDecodeRefuses: files the family does not read exactly are refused
// by decode and by decodeConfig (the data check's and the channel
// inference's reader) with what they are and what is allowed, whatever
// their name. The test binary registers GIF and TIFF with package image,
// as the trmaml binary does through its other packages.
func TestDecodeRefuses(t *testing.T) {
	rgb := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range rgb.Pix {
		rgb.Pix[i] = uint8(16 * (i % 16))
	}
	pal := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 255, 255}})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"gif.png", encoded(t, pal, gifOf), "a GIF file, not PNG or JPEG"},
		{"tiff.jpg", encoded(t, rgb, tiffOf), "a TIFF file, not PNG or JPEG"},
		{"zero.png", nil, "not a readable PNG or JPEG: the first bytes are neither format"},
		{"truncated.png", encoded(t, rgb, pngOf)[:40], "not a readable PNG file: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, c := range []int{1, 3} {
				err := newDecoder(4, 4, c, true, "nearest").decode(path, make([]uint8, 4*4*c))
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("decode (%d channels): %v, want %q", c, err, tc.want)
				}
			}
			if _, _, _, err := decodeConfig(path); err == nil && tc.name != "truncated.png" {
				t.Errorf("decodeConfig: no error, want %q", tc.want)
			}
		})
	}
}
