package imagefolder

import (
	"bytes"
	"compress/zlib"
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
	return pngOf8(w, h, 6, []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
}

// pngOf8 is a w x h PNG of colour type ct at 8 bits: the header, the
// chunks extra (type, data), the compressed data idat and the end.
func pngOf8(w, h uint32, ct byte, idat []byte, extra ...string) []byte {
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
	ihdr[8], ihdr[9] = 8, ct
	chunk("IHDR", ihdr)
	for i := 0; i+1 < len(extra); i += 2 {
		chunk(extra[i], []byte(extra[i+1]))
	}
	chunk("IDAT", idat)
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

// rawPNG is a w x h PNG of colour type ct (0 grey, 2 RGB, 4 grey and
// alpha, 6 RGBA) at 8 bits, of the samples pix (row-major), with the
// chunks extra (type, data) before the data: what Go's encoder cannot
// write (grey and alpha, a grey transparency key).
func rawPNG(w, h uint32, ct byte, pix []byte, extra ...string) []byte {
	row := len(pix) / int(h)
	var raw bytes.Buffer
	for y := range int(h) {
		raw.WriteByte(0) // filter: none
		raw.Write(pix[y*row : (y+1)*row])
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw.Bytes())
	zw.Close()
	return pngOf8(w, h, ct, z.Bytes(), extra...)
}

// TestDecodeChannels: a file's channels are what its format says, not
// what Go's decoder holds it in: a PNG of grey and alpha, or grey with a
// transparency key, is greyscale (Go decodes both to NRGBA), so it loads
// exactly with channels 1, is refused with channels 3 unless convert, and
// its transparency is refused or drawn over black with convert.
func TestDecodeChannels(t *testing.T) {
	const w, h = 3, 2
	grey := []byte{0, 17, 128, 200, 254, 255}
	var greyAlpha, greyHalf []byte
	for i, v := range grey {
		greyAlpha = append(greyAlpha, v, 255)
		greyHalf = append(greyHalf, v, byte(51*i)) // alpha 0, 51, ... 255
	}
	over := func(vs []byte, alpha func(i int) int) []byte { // over black, by hand
		var out []byte
		for i, v := range vs {
			out = append(out, byte((int(v)*alpha(i)+127)/255))
		}
		return out
	}
	triple := func(vs []byte) []byte {
		var out []byte
		for _, v := range vs {
			out = append(out, v, v, v)
		}
		return out
	}
	key99 := string([]byte{0, 99})   // a grey key no pixel has
	key200 := string([]byte{0, 200}) // the grey of pixel 3
	for _, tc := range []struct {
		name     string
		data     []byte
		c        int
		convert  bool
		want     []byte // the decoded pixels, or
		wantErr  string // the refusal
		tolerant bool   // rounding of the blend may differ by 1
	}{
		{"grey+alpha opaque, channels 1", rawPNG(w, h, 4, greyAlpha), 1, false, grey, "", false},
		{"grey+alpha opaque, channels 3", rawPNG(w, h, 4, greyAlpha), 3, false, nil, "greyscale, want colour", false},
		{"grey+alpha opaque, channels 3 convert", rawPNG(w, h, 4, greyAlpha), 3, true, triple(grey), "", false},
		{"grey+alpha transparent, channels 1", rawPNG(w, h, 4, greyHalf), 1, false, nil, "has transparent pixels", false},
		{"grey+alpha transparent, convert", rawPNG(w, h, 4, greyHalf), 1, true, over(grey, func(i int) int { return 51 * i }), "", true},
		{"grey with an unused key, channels 1", rawPNG(w, h, 0, grey, "tRNS", key99), 1, false, grey, "", false},
		{"grey with an unused key, channels 3", rawPNG(w, h, 0, grey, "tRNS", key99), 3, false, nil, "greyscale, want colour", false},
		{"grey with a used key, channels 1", rawPNG(w, h, 0, grey, "tRNS", key200), 1, false, nil, "has transparent pixels", false},
		{"grey with a used key, convert", rawPNG(w, h, 0, grey, "tRNS", key200), 1, true, []byte{0, 17, 128, 0, 254, 255}, "", false},
		{"RGB, channels 3", rawPNG(w, h, 2, triple(grey)), 3, false, triple(grey), "", false},
		{"RGB, channels 1", rawPNG(w, h, 2, triple(grey)), 1, false, nil, "colour, want greyscale", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.png")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			fileC := 1
			if strings.HasPrefix(tc.name, "RGB") {
				fileC = 3
			}
			if gw, gh, gc, err := decodeConfig(path); err != nil || gw != w || gh != h || gc != fileC {
				t.Errorf("decodeConfig: %dx%d, %d channels, %v; want %dx%d, %d", gw, gh, gc, err, w, h, fileC)
			}
			out := make([]byte, w*h*tc.c)
			err := newDecoder(h, w, tc.c, tc.convert, "nearest").decode(path, out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("decode: %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range out {
				if d := int(out[i]) - int(tc.want[i]); d != 0 && !(tc.tolerant && (d == 1 || d == -1)) {
					t.Fatalf("decoded %v, want %v", out, tc.want)
				}
			}
		})
	}
}
