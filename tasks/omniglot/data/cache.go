package data

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/trmaml/trmaml/internal/atomicfile"
)

// The cache file holds one decoded Dataset:
//
//	magic "TRMAML-OMNIGLOT\n"
//	uint32 little-endian length of the JSON header, then the header
//	the images' row spans (header.PixelBytes bytes; store.go)
//	uint32 little-endian CRC-32C of everything before it
//
// The header carries the key (content hash of the sources and resize
// settings) and the index arrays; a cache whose key differs, or which is
// truncated or damaged, is rebuilt.
const cacheMagic = "TRMAML-OMNIGLOT\n"

// cacheKey identifies what a cache was built from.
type cacheKey struct {
	ContentSHA256 string
	Size          int
	Filter        string
	Pipeline      int
}

type cacheHeader struct {
	Key        cacheKey
	Alphabets  []Alphabet
	CharFirst  []int
	ImageFirst []int
	PixelBytes int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxCacheHeader bounds the header length read from a cache file.
const maxCacheHeader = 1 << 24

// writeCache stores d with its key at path, atomically.
func writeCache(path string, key cacheKey, d *Dataset) error {
	hdr, err := json.Marshal(cacheHeader{key, d.alphabets, d.charFirst, d.imageFirst, len(d.store.data)})
	if err != nil {
		return err
	}
	return atomicfile.WriteFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		crc := crc32.New(castagnoli)
		mw := io.MultiWriter(bw, crc)
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(hdr)))
		for _, part := range [][]byte{[]byte(cacheMagic), n[:], hdr, d.store.data} {
			if _, err := mw.Write(part); err != nil {
				return err
			}
		}
		binary.LittleEndian.PutUint32(n[:], crc.Sum32())
		if _, err := bw.Write(n[:]); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// readCache loads the dataset cached at path if its key is want and its
// checksum holds; the error says why not otherwise.
func readCache(path string, want cacheKey) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no cache file %s", path)
	}
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("cache file %s %s", path, what) }
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return nil, bad("is not a trmaml Omniglot cache")
	}
	body, tail := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(tail) {
		return nil, bad("is damaged (checksum mismatch)")
	}
	rest := body[len(cacheMagic):]
	n := int(binary.LittleEndian.Uint32(rest))
	if n > maxCacheHeader || n > len(rest)-4 {
		return nil, bad("has a bad header length")
	}
	var h cacheHeader
	if err := json.Unmarshal(rest[4:4+n], &h); err != nil {
		return nil, bad("has a bad header: " + err.Error())
	}
	if h.Key != want {
		return nil, bad(fmt.Sprintf("was built from %+v, want %+v", h.Key, want))
	}
	pixels := rest[4+n:]
	d := &Dataset{size: h.Key.Size, alphabets: h.Alphabets, charFirst: h.CharFirst, imageFirst: h.ImageFirst}
	if err := d.checkIndex(); err != nil || len(pixels) != h.PixelBytes {
		return nil, bad("has an inconsistent layout")
	}
	if d.store, err = parseImageStore(d.size, d.Images(), pixels); err != nil {
		return nil, bad("has damaged images: " + err.Error())
	}
	for i := range d.alphabets { // the split is the code's, not the cache's
		d.alphabets[i].Split = splitOf(d.alphabets[i].Set, d.alphabets[i].Name)
	}
	return d, nil
}

// checkIndex makes sure the index arrays are consistent, so that a damaged
// cache that passed its checksum cannot index out of range.
func (d *Dataset) checkIndex() error {
	if len(d.charFirst) != len(d.alphabets)+1 || len(d.charFirst) == 0 || d.charFirst[0] != 0 ||
		len(d.imageFirst) != d.charFirst[len(d.charFirst)-1]+1 || d.imageFirst[0] != 0 {
		return errors.New("index arrays disagree")
	}
	for a := range d.alphabets {
		if d.charFirst[a+1]-d.charFirst[a] != d.alphabets[a].Characters || d.alphabets[a].Characters < 1 {
			return errors.New("character counts disagree")
		}
	}
	for c := 1; c < len(d.imageFirst); c++ {
		if d.imageFirst[c] <= d.imageFirst[c-1] {
			return errors.New("image counts disagree")
		}
	}
	if d.size < 1 {
		return errors.New("bad image size")
	}
	return nil
}
