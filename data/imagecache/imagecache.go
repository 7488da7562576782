// Package imagecache keeps decoded images between runs: one file per
// dataset and decoding settings, holding every image as 8-bit pixels
// (height x width x channels, interleaved), so that a second start reads one
// file instead of decoding tens of thousands of PNGs or JPEGs.
//
// A cache is keyed by the content of the source files (their names relative
// to the dataset folder, sizes and SHA-256, hashed by Hash) and a string of
// the decoding settings: changing a file, adding one or asking for another
// size or filter gives another key and another file, named after the key.
// Files are written atomically (a temporary file renamed into place), so
// runs that start at once on the same data both read a complete file or
// build their own; the last rename wins and both are equal.
package imagecache

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/trmaml/trmaml/internal/atomicfile"
)

// Set is a set of decoded images of one shape: image k is
// Pix[k*H*W*C : (k+1)*H*W*C], row-major with the channels of a pixel
// adjacent.
type Set struct {
	H, W, C int
	Pix     []uint8
}

// Len is the number of images.
func (s *Set) Len() int {
	if n := s.H * s.W * s.C; n > 0 {
		return len(s.Pix) / n
	}
	return 0
}

// Image returns image k's pixels, sharing s's memory.
func (s *Set) Image(k int) []uint8 {
	n := s.H * s.W * s.C
	return s.Pix[k*n : (k+1)*n : (k+1)*n]
}

// Key identifies what a cache holds: the sources' content (Hash) and the
// decoding settings, a string the caller builds from every setting that
// changes the pixels.
type Key struct {
	Content  [32]byte
	Settings string
}

// Name is the cache file's name for k: "decoded-" and 16 bytes of the
// SHA-256 of both parts, in hex.
func (k Key) Name() string {
	h := sha256.New()
	h.Write(k.Content[:])
	h.Write([]byte(k.Settings))
	return "decoded-" + hex.EncodeToString(h.Sum(nil)[:16]) + ".cache"
}

// Hash is the content digest of the files at paths, named by names (their
// paths relative to the dataset folder, so that a moved folder keeps its
// cache): the SHA-256 of every name, size and file SHA-256, in order;
// files are each file's SHA-256, for a caller that reads the files again
// to tell one that changed since. The files are read on as many
// goroutines as there are CPUs; an unreadable file is an error naming it.
func Hash(paths, names []string) (content [32]byte, files [][32]byte, err error) {
	if len(paths) != len(names) {
		return [32]byte{}, nil, fmt.Errorf("imagecache: %d paths and %d names", len(paths), len(names))
	}
	sums := make([][32]byte, len(paths))
	sizes := make([]int64, len(paths))
	errs := make([]error, len(paths))
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(paths), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			buf := make([]byte, 1<<16)
			for i := range next {
				sizes[i], errs[i] = hashFile(paths[i], h, buf)
				h.Sum(sums[i][:0])
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return [32]byte{}, nil, err
	}
	all := sha256.New()
	var n [8]byte
	for i, name := range names {
		binary.LittleEndian.PutUint64(n[:], uint64(len(name)))
		all.Write(n[:])
		all.Write([]byte(name))
		binary.LittleEndian.PutUint64(n[:], uint64(sizes[i]))
		all.Write(n[:])
		all.Write(sums[i][:])
	}
	all.Sum(content[:0])
	return content, sums, nil
}

func hashFile(path string, h interface {
	io.Writer
	Reset()
}, buf []byte) (int64, error) {
	h.Reset()
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.CopyBuffer(h, f, buf)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return n, nil
}

// The cache file:
//
//	magic "TRMAML-IMAGES-1\n"
//	uint32 little-endian length of the JSON header, then the header
//	the pixels (header.Images * H * W * C bytes)
//	uint32 little-endian CRC-32C of everything before it
const magic = "TRMAML-IMAGES-1\n"

type header struct {
	Content  string `json:"content"`
	Settings string `json:"settings"`
	H        int    `json:"h"`
	W        int    `json:"w"`
	C        int    `json:"c"`
	Images   int    `json:"images"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxHeader bounds the header length read from a file.
const maxHeader = 1 << 20

// Write stores s under key in dir (created if missing), atomically, and
// returns the file's path.
func Write(dir string, key Key, s *Set) (string, error) {
	if s.H < 1 || s.W < 1 || s.C < 1 || len(s.Pix)%(s.H*s.W*s.C) != 0 {
		return "", fmt.Errorf("imagecache: %d bytes are not whole %dx%dx%d images", len(s.Pix), s.H, s.W, s.C)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	hdr, err := json.Marshal(header{hex.EncodeToString(key.Content[:]), key.Settings, s.H, s.W, s.C, s.Len()})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, key.Name())
	return path, atomicfile.WriteFunc(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		crc := crc32.New(castagnoli)
		mw := io.MultiWriter(bw, crc)
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(hdr)))
		for _, part := range [][]byte{[]byte(magic), n[:], hdr, s.Pix} {
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

// ErrMiss marks a cache that does not exist in a directory.
var ErrMiss = errors.New("no cache file")

// Read loads the set cached under key in dir. The error wraps ErrMiss when
// there is no such file, and says what is wrong with one that is
// truncated, damaged or holds another key.
func Read(dir string, key Key) (*Set, error) {
	path := filepath.Join(dir, key.Name())
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w %s", ErrMiss, path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("cache file %s: %s", path, what) }
	br := bufio.NewReaderSize(f, 1<<16)
	crc := crc32.New(castagnoli)
	r := io.TeeReader(br, crc)
	head := make([]byte, len(magic)+4)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(magic)]) != magic {
		return nil, bad("not a trmaml image cache")
	}
	hl := binary.LittleEndian.Uint32(head[len(magic):])
	if hl > maxHeader {
		return nil, bad("header too long")
	}
	raw := make([]byte, hl)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, bad("truncated header")
	}
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, bad("damaged header")
	}
	if h.Content != hex.EncodeToString(key.Content[:]) || h.Settings != key.Settings {
		return nil, bad("built from other files or settings")
	}
	size := int64(h.Images) * int64(h.H) * int64(h.W) * int64(h.C)
	if h.Images < 0 || h.H < 1 || h.W < 1 || h.C < 1 || size != fi.Size()-int64(len(head))-int64(hl)-4 {
		return nil, bad(fmt.Sprintf("%d bytes, not %d images of %dx%dx%d", fi.Size(), h.Images, h.H, h.W, h.C))
	}
	s := &Set{H: h.H, W: h.W, C: h.C, Pix: make([]uint8, size)}
	if _, err := io.ReadFull(r, s.Pix); err != nil {
		return nil, bad("truncated pixels")
	}
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil || binary.LittleEndian.Uint32(tail[:]) != crc.Sum32() {
		return nil, bad("checksum mismatch (damaged)")
	}
	return s, nil
}

// UserDir is the per-user cache directory for datasets whose folder cannot
// be written: os.UserCacheDir()/trmaml/images.
func UserDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "trmaml", "images"), nil
}

// DirName is the folder beside a dataset's files that holds its caches.
const DirName = ".trmaml-cache"

// Load returns the set cached under key beside the data (dataDir/DirName)
// or in the user cache directory, else builds it with build and writes it
// beside the data, or in the user cache directory when the data folder is
// not writable. Info says which happened; a cache that could not be
// written is Info.WriteErr, not an error: the set is complete.
func Load(dataDir string, key Key, build func() (*Set, error)) (*Set, Info, error) {
	dirs := []string{filepath.Join(dataDir, DirName)}
	if u, err := UserDir(); err == nil {
		dirs = append(dirs, u)
	}
	var info Info
	for _, d := range dirs {
		s, err := Read(d, key)
		if err == nil {
			info.Path, info.FromCache = filepath.Join(d, key.Name()), true
			return s, info, nil
		}
		if !errors.Is(err, ErrMiss) {
			info.Rebuilt = err.Error()
		}
	}
	s, err := build()
	if err != nil {
		return nil, info, err
	}
	for _, d := range dirs {
		if info.Path, info.WriteErr = Write(d, key, s); info.WriteErr == nil {
			break
		}
	}
	return s, info, nil
}

// Info says where a loaded set came from.
type Info struct {
	Path      string // the cache file read or written
	FromCache bool   // the pixels came from Path
	Rebuilt   string // why an existing cache file was not used
	WriteErr  error  // writing the cache failed everywhere
}
