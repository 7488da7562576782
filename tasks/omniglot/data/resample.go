package data

import (
	"fmt"
	"image"
	"math"
	"strings"

	"golang.org/x/image/draw"
)

// Resize names how the 105 x 105 source images are shrunk to Options.Size.
// The choice changes what the network sees on thin strokes (Braille's dots,
// a hairline stroke), so it is a data option recorded in the cache key.
type Resize string

const (
	// Bilinear is x/image/draw's BiLinear kernel, which draw widens to the
	// scale factor when shrinking (105 -> 28: a tent over 2 x 3.75 source
	// pixels): every source pixel contributes (antialiased) and the
	// weights are non-negative, so strokes never ring. The default.
	Bilinear Resize = "bilinear"
	// Lanczos is Pillow's Image.LANCZOS applied to the grayscale (mode
	// "L") image, reproduced to the bit: a 3-lobe windowed sinc widened to
	// the scale factor, separable, horizontal pass first, 22-bit
	// fixed-point weights and an 8-bit intermediate image.
	Lanczos Resize = "lanczos"
	// Nearest is what Pillow does when asked to resize Omniglot's 1-bit
	// PNGs (mode "1") with any filter: its Image.resize replaces the
	// filter by NEAREST for mode "1", so output pixel x reads source pixel
	// floor((x + 0.5) * 105 / size). This is the input of the paper's
	// code (HowToTrainYourMAMLPytorch's loader calls
	// image.resize(..., resample=Image.LANCZOS) on the PNG as opened):
	// every stroke thinner than 3.75 source pixels may vanish or break.
	Nearest Resize = "nearest"
)

// Resizes lists the accepted Resize values, the default first.
var Resizes = []Resize{Bilinear, Lanczos, Nearest}

// ParseResize returns the Resize named s ("" is the default, Bilinear).
func ParseResize(s string) (Resize, error) {
	if s == "" {
		return Bilinear, nil
	}
	for _, r := range Resizes {
		if string(r) == s {
			return r, nil
		}
	}
	names := make([]string, len(Resizes))
	for i, r := range Resizes {
		names[i] = string(r)
	}
	return "", fmt.Errorf("unknown resize %q (allowed: %s)", s, strings.Join(names, ", "))
}

// cacheFilter is the Filter field of the cache key. Bilinear keeps the name
// caches were built under before the option existed, so they stay valid.
func (r Resize) cacheFilter() string {
	if r == Bilinear {
		return "x/image/draw.BiLinear"
	}
	return "pillow." + string(r)
}

// cacheName is the cache file of a resize in the omniglot directory: one
// file per resize, so that evaluating a model under another resize does
// not evict the default's cache.
func (r Resize) cacheName() string {
	if r == Bilinear {
		return CacheName
	}
	return strings.TrimSuffix(CacheName, ".cache") + "-" + string(r) + ".cache"
}

// shrinker shrinks one decoded 105 x 105 gray image into out (size x size,
// gray levels, background 255). Each goroutine owns one.
type shrinker interface {
	shrink(src *image.Gray, out []uint8)
}

func newShrinker(r Resize, size int) shrinker {
	switch r {
	case Lanczos:
		return newPillowLanczos(sourceSide, size)
	case Nearest:
		return newPillowNearest(sourceSide, size)
	default:
		return &drawShrinker{
			scaler: draw.BiLinear.NewScaler(size, size, sourceSide, sourceSide),
			dst:    image.NewRGBA(image.Rect(0, 0, size, size)),
		}
	}
}

// drawShrinker is the Bilinear resize through x/image/draw, into RGBA as
// it always was (draw's RGBA path fixes the rounding of cached datasets).
type drawShrinker struct {
	scaler draw.Scaler
	dst    *image.RGBA
}

func (d *drawShrinker) shrink(src *image.Gray, out []uint8) {
	d.scaler.Scale(d.dst, d.dst.Bounds(), src, src.Bounds(), draw.Src, nil)
	for i := range out {
		out[i] = d.dst.Pix[4*i] // gray input: R = G = B
	}
}

// pillowNearest is Pillow's NEAREST resize: output pixel x reads source
// pixel int((x + 0.5) * in / out) on each axis.
type pillowNearest struct {
	idx []int
	in  int
}

func newPillowNearest(in, out int) *pillowNearest {
	idx := make([]int, out)
	scale := float64(in) / float64(out)
	for x := range idx {
		idx[x] = min(int((float64(x)+0.5)*scale), in-1)
	}
	return &pillowNearest{idx: idx, in: in}
}

func (p *pillowNearest) shrink(src *image.Gray, out []uint8) {
	n := len(p.idx)
	for y, sy := range p.idx {
		row := src.Pix[sy*src.Stride:]
		for x, sx := range p.idx {
			out[y*n+x] = row[sx]
		}
	}
}

// pillowPrecision is Pillow's PRECISION_BITS for 8-bit images: 32 - 8 - 2.
const pillowPrecision = 22

// pillowLanczos is Pillow's two-pass convolution resize with its LANCZOS
// filter (ImagingResample: precompute_coeffs, normalize_coeffs_8bpc,
// ImagingResampleHorizontal_8bpc then ImagingResampleVertical_8bpc), for a
// square image shrunk by the same factor on both axes.
type pillowLanczos struct {
	first   []int   // first source pixel of each output pixel's window
	weights [][]int // fixed-point weights over the window, per output pixel
	in      int
	tmp     []uint8 // in rows x out columns: the horizontal pass
}

func newPillowLanczos(in, out int) *pillowLanczos {
	const support = 3.0 // Lanczos lobes
	scale := float64(in) / float64(out)
	filterScale := max(scale, 1)
	sup := support * filterScale
	p := &pillowLanczos{in: in, tmp: make([]uint8, in*out)}
	for x := range out {
		center := (float64(x) + 0.5) * scale
		lo := max(int(center-sup+0.5), 0)
		hi := min(int(center+sup+0.5), in)
		w := make([]float64, hi-lo)
		sum := 0.0
		for i := range w {
			w[i] = lanczos((float64(i+lo) - center + 0.5) / filterScale)
			sum += w[i]
		}
		fixed := make([]int, len(w))
		for i, v := range w {
			if sum != 0 {
				v /= sum
			}
			if v < 0 {
				fixed[i] = int(-0.5 + v*(1<<pillowPrecision))
			} else {
				fixed[i] = int(0.5 + v*(1<<pillowPrecision))
			}
		}
		p.first = append(p.first, lo)
		p.weights = append(p.weights, fixed)
	}
	return p
}

// lanczos is Pillow's lanczos_filter: sinc(x) sinc(x/3) on [-3, 3).
func lanczos(x float64) float64 {
	if x < -3 || x >= 3 {
		return 0
	}
	return sinc(x) * sinc(x/3)
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

// clip8 is Pillow's clip8: round the fixed-point sum to a byte.
func clip8(v int) uint8 {
	switch {
	case v >= 255<<pillowPrecision:
		return 255
	case v <= 0:
		return 0
	}
	return uint8(v >> pillowPrecision)
}

func (p *pillowLanczos) shrink(src *image.Gray, out []uint8) {
	n := len(p.first)
	for y := range p.in { // horizontal pass: in rows of n pixels
		row := src.Pix[y*src.Stride:]
		for x, w := range p.weights {
			s := 1 << (pillowPrecision - 1)
			for i, k := range w {
				s += int(row[p.first[x]+i]) * k
			}
			p.tmp[y*n+x] = clip8(s)
		}
	}
	for y, w := range p.weights { // vertical pass
		for x := range n {
			s := 1 << (pillowPrecision - 1)
			for i, k := range w {
				s += int(p.tmp[(p.first[y]+i)*n+x]) * k
			}
			out[y*n+x] = clip8(s)
		}
	}
}
