package imagefolder

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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
		// Decompression bombs: headers claiming more pixels than memory
		// holds, refused before anything is allocated.
		{"bomb.png", bombPNG(100000, 100000), "100000x100000 (width x height): more than the 67108864 pixels"},
		{"bomb.jpg", bombJPEG(65000, 65000), "65000x65000 (width x height): more than the 67108864 pixels"},
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

// bombPNG is a PNG whose header claims w x h RGBA pixels, with no data.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8 bits, RGBA
	chunk("IHDR", ihdr)
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}

// bombJPEG is a baseline JPEG header claiming w x h grey pixels (a start
// of frame and a start of scan), with no data.
func bombJPEG(w, h uint16) []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 11, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 1, 1, 0x11, 0}
	b = append(b, 0xff, 0xda, 0, 8, 1, 1, 0, 0, 63, 0)
	return append(b, 0xff, 0xd9)
}
