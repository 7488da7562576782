package data

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// imageStore holds size x size 8-bit images as row spans: most of an
// Omniglot image is background (0), so each row keeps only the pixels from
// its first to its last ink pixel. At 28 x 28 the dataset takes 7.8 MB
// instead of 25 MB: the images were the largest part of what a training
// run holds beside its graph (docs/performance.md, "Memory of a whole
// run").
//
// Image k is data[off[k]:off[k+1]]: for each of its size rows, the uvarint
// column of the span's first pixel, the uvarint span length, and the span's
// pixels. An empty row is a zero length (and column).
type imageStore struct {
	size int
	off  []int // len images+1, off[0] == 0
	data []byte
}

// storedSpans encodes img (size*size pixels, row-major) as appended to dst.
func storedSpans(dst []byte, img []uint8, size int) []byte {
	for y := range size {
		row := img[y*size : (y+1)*size]
		a, b := 0, size
		for a < b && row[a] == 0 {
			a++
		}
		for b > a && row[b-1] == 0 {
			b--
		}
		if a == b {
			a, b = 0, 0
		}
		dst = binary.AppendUvarint(dst, uint64(a))
		dst = binary.AppendUvarint(dst, uint64(b-a))
		dst = append(dst, row[a:b]...)
	}
	return dst
}

// newImageStore holds the encoded images (storedSpans) in one slice of
// their total size.
func newImageStore(size int, images [][]byte) *imageStore {
	total := 0
	for _, enc := range images {
		total += len(enc)
	}
	s := &imageStore{size: size, off: make([]int, 1, len(images)+1), data: make([]byte, 0, total)}
	for _, enc := range images {
		s.data = append(s.data, enc...)
		s.off = append(s.off, len(s.data))
	}
	return s
}

// images is the number of images stored.
func (s *imageStore) images() int { return len(s.off) - 1 }

// bytes is the memory the store holds.
func (s *imageStore) bytes() int { return cap(s.data) + strconv.IntSize/8*cap(s.off) }

// encoded returns image k's encoding, to be read row by row with
// nextSpan. Stores come from newImageStore or parseImageStore, which
// validated them.
func (s *imageStore) encoded(k int) []byte { return s.data[s.off[k]:s.off[k+1]] }

// nextSpan reads one row of a validated encoding: the column of its span's
// first pixel, the span's pixels, and the encoding of the rows after it.
func nextSpan(enc []byte) (x int, span []uint8, rest []byte) {
	a, m := binary.Uvarint(enc)
	enc = enc[m:]
	l, m := binary.Uvarint(enc)
	enc = enc[m:]
	return int(a), enc[:l:l], enc[l:]
}

// decode writes image k to dst (size*size pixels).
func (s *imageStore) decode(k int, dst []uint8) {
	enc, n := s.encoded(k), s.size
	dst = dst[:n*n]
	clear(dst)
	for y := range n {
		var x int
		var span []uint8
		x, span, enc = nextSpan(enc)
		copy(dst[y*n+x:], span)
	}
}

// parseImageStore indexes data holding count encoded images of side size
// (the encoding delimits itself), checking every span, so that a damaged
// cache file that passed its checksum cannot make decode index out of
// range.
func parseImageStore(size, count int, data []byte) (*imageStore, error) {
	// Every row takes two bytes at least: more images than that are a
	// damaged count, refused before it sizes an allocation.
	if size < 1 || count < 0 || count > len(data)/(2*size) {
		return nil, fmt.Errorf("%d images of side %d cannot be in %d bytes", count, size, len(data))
	}
	s := &imageStore{size: size, off: make([]int, 1, count+1), data: data}
	n, p := uint64(size), 0
	for k := range count {
		for y := range size {
			a, m := binary.Uvarint(data[p:])
			if m <= 0 {
				return nil, fmt.Errorf("image %d row %d: bad span start", k, y)
			}
			p += m
			l, m := binary.Uvarint(data[p:])
			if m <= 0 || a > n || l > n-a || l > uint64(len(data)-p-m) {
				return nil, fmt.Errorf("image %d row %d: span out of range", k, y)
			}
			p += m + int(l)
		}
		s.off = append(s.off, p)
	}
	if p != len(data) {
		return nil, fmt.Errorf("%d bytes beyond the last image", len(data)-p)
	}
	return s, nil
}
