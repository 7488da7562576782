package imagefolder

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"

	"golang.org/x/image/draw"
)

// channelsOf is 1 for a greyscale colour model (a palette of greys
// included), 3 for any other.
func channelsOf(m color.Model) int {
	switch m {
	case color.GrayModel, color.Gray16Model:
		return 1
	}
	if p, ok := m.(color.Palette); ok {
		for _, c := range p {
			r, g, b, _ := c.RGBA()
			if r != g || g != b {
				return 3
			}
		}
		return 1
	}
	return 3
}

// decodeConfig reads an image file's size and channels from its header.
func decodeConfig(path string) (w, h, channels int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, unwrapPath(err)
	}
	defer f.Close()
	hd, _, err := readHeader(f)
	if err != nil {
		return 0, 0, 0, err
	}
	return hd.w, hd.h, hd.channels, nil
}

// firstHeader is the size and channels of the first of paths whose
// header reads: what image [0, 0] and channels 0 take from the files (a
// file that does not read is a problem of its own, not the reference of
// the others); ok is false when none reads.
func firstHeader(paths []string) (w, h, channels int, ok bool) {
	for _, p := range paths {
		if w, h, c, err := decodeConfig(p); err == nil {
			return w, h, c, true
		}
	}
	return 0, 0, 0, false
}

// imageHeader is what an image file's header says: its format ("png" or
// "jpeg"), size and channels.
type imageHeader struct {
	format   string
	w, h     int
	channels int
}

// signatures are the first bytes of the formats the family reads ("png",
// "jpeg") and of common ones it does not, to name them when refusing ('?'
// matches any byte).
var signatures = []struct{ magic, format string }{
	{"\x89PNG\r\n\x1a\n", "png"},
	{"\xff\xd8\xff", "jpeg"},
	{"GIF8", "GIF"},
	{"BM", "BMP"},
	{"II*\x00", "TIFF"},
	{"MM\x00*", "TIFF"},
	{"RIFF????WEBP", "WebP"},
	{"????ftypheic", "HEIC"},
	{"????ftypavif", "AVIF"},
}

// sniff names the format of a file's first bytes, "" if none of
// signatures.
func sniff(head []byte) string {
	for _, s := range signatures {
		if len(head) < len(s.magic) {
			continue
		}
		match := true
		for i := range len(s.magic) {
			if s.magic[i] != '?' && s.magic[i] != head[i] {
				match = false
				break
			}
		}
		if match {
			return s.format
		}
	}
	return ""
}

// maxPixels bounds a source image's width x height: decoding one takes
// about 8 bytes a pixel (the decoded file and its 8-bit RGBA copy) on each
// decoding goroutine, 512 MB at the bound.
const maxPixels = 8192 * 8192

// readHeader reads an image file's header from r with the decoder of its
// own format, PNG or JPEG, whatever its name; any other format is refused
// here, also those that other packages of the binary register with
// package image (GIF, TIFF), which the family does not claim to read, and
// so is a header claiming more than maxPixels. The channels are the
// format's: a PNG of colour type grey or grey and alpha is greyscale,
// though Go decodes one with alpha or a transparency key to NRGBA. The
// reader returned reads the whole file again from its start, without
// rereading r's bytes.
func readHeader(r io.Reader) (imageHeader, io.Reader, error) {
	var seen bytes.Buffer
	tee := io.TeeReader(r, &seen)
	head := make([]byte, 26) // a PNG's colour type is byte 25
	n, err := io.ReadFull(tee, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return imageHeader{}, nil, fmt.Errorf("cannot be read: %v", unwrapPath(err))
	}
	format := sniff(head[:n])
	var cfg image.Config
	switch format {
	case "png":
		cfg, err = png.DecodeConfig(io.MultiReader(bytes.NewReader(head[:n]), tee))
	case "jpeg":
		cfg, err = jpeg.DecodeConfig(io.MultiReader(bytes.NewReader(head[:n]), tee))
	case "":
		return imageHeader{}, nil, fmt.Errorf("not a readable PNG or JPEG: the first bytes are neither format's (%d bytes)", n)
	default:
		return imageHeader{}, nil, fmt.Errorf("a %s file, not PNG or JPEG: the family reads only these (convert it, e.g. to PNG)", format)
	}
	if err != nil {
		return imageHeader{}, nil, fmt.Errorf("not a readable %s file: %v", formatName(format), err)
	}
	if n := int64(cfg.Width) * int64(cfg.Height); n > maxPixels {
		return imageHeader{}, nil, fmt.Errorf("%dx%d (width x height): more than the %d pixels (8192 x 8192) the family decodes; a header claiming more is refused before decoding (a decompression bomb, or an image to shrink first)", cfg.Width, cfg.Height, maxPixels)
	}
	hd := imageHeader{format, cfg.Width, cfg.Height, channelsOf(cfg.ColorModel)}
	if format == "png" && n == len(head) && (head[25] == pngGrey || head[25] == pngGreyAlpha) {
		hd.channels = 1
	}
	return hd, io.MultiReader(&seen, r), nil
}

// The PNG colour types of greyscale images.
const (
	pngGrey      = 0
	pngGreyAlpha = 4
)

func formatName(format string) string {
	if format == "png" {
		return "PNG"
	}
	return "JPEG"
}

// decoder turns image files into h x w x c bytes; one per goroutine, as it
// keeps its scratch images and scalers.
type decoder struct {
	h, w, c int  // the output
	keep    bool // refuse a file of another size instead of resizing it
	convert bool // a file with other channels is converted, not refused
	filter  string
	scalers map[[2]int]draw.Scaler
}

func newDecoder(h, w, c int, convert bool, filter string) *decoder {
	return &decoder{h: h, w: w, c: c, convert: convert, filter: filter, scalers: map[[2]int]draw.Scaler{}}
}

// decode reads the file at path into out (h*w*c bytes); a problem with
// the file is an error saying what.
func (d *decoder) decode(path string, out []uint8) error { return d.decodeFile(path, nil, out) }

// decodeFile is decode of a file whose content must have the SHA-256 sum
// if sum is not nil (its hash when the cache's key was computed): a file
// that changed since is refused, so that no cache holds one content's
// pixels under another's key. Every byte is read once.
func (d *decoder) decodeFile(path string, sum *[32]byte, out []uint8) error {
	f, err := os.Open(path)
	if err != nil {
		return unwrapPath(err)
	}
	defer f.Close()
	digest := sha256.New()
	hd, r, err := readHeader(bufio.NewReader(io.TeeReader(f, digest)))
	if err != nil {
		return err
	}
	var src image.Image
	if hd.format == "png" {
		src, err = png.Decode(r)
	} else {
		src, err = jpeg.Decode(r)
	}
	if err != nil {
		return fmt.Errorf("not a readable %s file: %v", formatName(hd.format), err)
	}
	if sum != nil {
		if _, err := io.Copy(io.Discard, r); err != nil { // the bytes after the image's end
			return fmt.Errorf("cannot be read: %v", unwrapPath(err))
		}
		if [32]byte(digest.Sum(nil)) != *sum {
			return fmt.Errorf("changed while the folder was being read (not the content hashed for the cache's key): load again once it is complete")
		}
	}
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	if d.keep && (sw != d.w || sh != d.h) {
		return fmt.Errorf("%dx%d (width x height), other images %dx%d: mixed sizes need task.imagefolder.image", sw, sh, d.w, d.h)
	}
	if c := hd.channels; c != d.c && !d.convert {
		return fmt.Errorf("%s, want %s (task.imagefolder.channels = %d, stated or from the first image; convert: true converts it)", channelsName(c), channelsName(d.c), d.c)
	}
	if o, ok := src.(interface{ Opaque() bool }); ok && !o.Opaque() && !d.convert {
		return fmt.Errorf("has transparent pixels, which channels 1 and 3 cannot hold (convert: true draws it over black)")
	}
	// The source as 8-bit pixels of the wanted channels: greyscale through
	// image.Gray (colour to grey by color.GrayModel's luma), colour through
	// image.RGBA.
	var img draw.Image
	if d.c == 1 {
		g, ok := src.(*image.Gray)
		if !ok || b.Min != (image.Point{}) {
			g = image.NewGray(image.Rect(0, 0, sw, sh))
			draw.Draw(g, g.Bounds(), src, b.Min, draw.Src)
		}
		img = g
	} else {
		rgba := image.NewRGBA(image.Rect(0, 0, sw, sh))
		draw.Draw(rgba, rgba.Bounds(), src, b.Min, draw.Src)
		img = rgba
	}
	h, w := d.h, d.w
	switch {
	case h == sh && w == sw:
		copyPixels(out, img, d.c)
	case d.filter == "nearest":
		nearest(out, img, d.c, h, w)
	case d.filter == "box":
		box(out, img, d.c, h, w)
	default:
		d.bilinear(out, img, h, w)
	}
	return nil
}

func channelsName(c int) string {
	if c == 1 {
		return "greyscale"
	}
	return "colour"
}

// pixels returns an 8-bit image's bytes, its channels per pixel (1 or 4)
// and its stride.
func pixels(img draw.Image) ([]uint8, int, int) {
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix, 1, m.Stride
	case *image.RGBA:
		return m.Pix, 4, m.Stride
	}
	panic(fmt.Sprintf("imagefolder: image of type %T", img))
}

// copyPixels writes img's channels (c of them) to out.
func copyPixels(out []uint8, img draw.Image, c int) {
	pix, step, stride := pixels(img)
	b := img.Bounds()
	k := 0
	for y := range b.Dy() {
		row := pix[y*stride:]
		for x := range b.Dx() {
			copy(out[k:k+c], row[x*step:x*step+c])
			k += c
		}
	}
}

// nearest is Pillow's NEAREST resize: output pixel x reads source pixel
// int((x + 0.5) * in / out) on each axis (the Omniglot family's nearest).
func nearest(out []uint8, img draw.Image, c, h, w int) {
	pix, step, stride := pixels(img)
	b := img.Bounds()
	ys, xs := nearestIndex(b.Dy(), h), nearestIndex(b.Dx(), w)
	k := 0
	for _, sy := range ys {
		row := pix[sy*stride:]
		for _, sx := range xs {
			copy(out[k:k+c], row[sx*step:sx*step+c])
			k += c
		}
	}
}

func nearestIndex(in, out int) []int {
	idx := make([]int, out)
	scale := float64(in) / float64(out)
	for x := range idx {
		idx[x] = min(int((float64(x)+0.5)*scale), in-1)
	}
	return idx
}

// box is the area average: every output pixel is the mean of the source
// area it covers, each source pixel weighted by the part of it inside
// (OpenCV's INTER_AREA when shrinking), rounded to the nearest level.
func box(out []uint8, img draw.Image, c, h, w int) {
	pix, step, stride := pixels(img)
	b := img.Bounds()
	wy, wx := boxWeights(b.Dy(), h), boxWeights(b.Dx(), w)
	tmp := make([]float64, b.Dy()*w*c) // horizontal pass
	for y := range b.Dy() {
		row := pix[y*stride:]
		for x, ws := range wx {
			for ch := range c {
				s := 0.0
				for i, wt := range ws.w {
					s += wt * float64(row[(ws.first+i)*step+ch])
				}
				tmp[(y*w+x)*c+ch] = s
			}
		}
	}
	for y, ws := range wy {
		for x := range w {
			for ch := range c {
				s := 0.0
				for i, wt := range ws.w {
					s += wt * tmp[((ws.first+i)*w+x)*c+ch]
				}
				out[(y*w+x)*c+ch] = uint8(min(max(s+0.5, 0), 255))
			}
		}
	}
}

type window struct {
	first int
	w     []float64
}

// boxWeights gives each output pixel's source pixels and their share of
// it: output pixel x covers [x, x+1) * in / out.
func boxWeights(in, out int) []window {
	scale := float64(in) / float64(out)
	ws := make([]window, out)
	for x := range ws {
		lo, hi := float64(x)*scale, float64(x+1)*scale
		first := int(lo)
		last := min(int(hi-1e-9), in-1)
		var w []float64
		for s := first; s <= last; s++ {
			w = append(w, (min(hi, float64(s+1))-max(lo, float64(s)))/scale)
		}
		ws[x] = window{first, w}
	}
	return ws
}

// bilinear is x/image/draw's BiLinear kernel into an RGBA image, which draw
// widens to the scale factor when shrinking: the Omniglot family's bilinear
// resize, to the bit, for greyscale images.
func (d *decoder) bilinear(out []uint8, img draw.Image, h, w int) {
	b := img.Bounds()
	key := [2]int{b.Dx(), b.Dy()}
	sc, ok := d.scalers[key]
	if !ok {
		sc = draw.BiLinear.NewScaler(w, h, b.Dx(), b.Dy())
		d.scalers[key] = sc
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sc.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	copyPixels(out, dst, d.c)
}
