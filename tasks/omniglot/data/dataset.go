package data

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Alphabet describes one alphabet of a loaded dataset or a listing.
type Alphabet struct {
	Name       string
	Set        string // "images_background" or "images_evaluation"
	Split      Split
	Characters int
	Images     int
}

// Dataset holds every Omniglot image resized to Size x Size, decoded once,
// as one byte per pixel: 0 background, 255 ink (the source PNGs have ink 0
// and background 1). The 8-bit step, 1/255, is what a resize to 8-bit
// grayscale (as in common Python pipelines) keeps too. Each row keeps only
// the span from its first to its last ink pixel: 7.8 MB at 28x28 instead of
// 25 MB dense or 100 MB as float32. The TaskSet converts to ink/255 in
// [0, 1] when it fills a batch.
type Dataset struct {
	size      int
	alphabets []Alphabet
	// charFirst[a] is the index of alphabet a's first character (alphabets
	// are in sorted path order, background before evaluation); charFirst has
	// one more entry, the total.
	charFirst []int
	// imageFirst[c] is the index of character c's first image; one more
	// entry, the total.
	imageFirst []int
	store      *imageStore // image k is store's image k

	// Info says how the dataset was obtained.
	Info LoadInfo
}

// LoadInfo records where a Dataset came from and how long that took.
type LoadInfo struct {
	Dir       string        // the omniglot directory read
	CachePath string        // the cache file used or written ("" without a cache)
	FromCache bool          // the pixels came from the cache file
	Rebuilt   string        // why the cache was (re)built, if it was
	CacheErr  error         // writing the cache failed (the dataset is still complete)
	HashTime  time.Duration // listing and hashing the sources
	LoadTime  time.Duration // decoding and resizing, or reading the cache
}

// Size is the side of the square images in pixels.
func (d *Dataset) Size() int { return d.size }

// Alphabets lists the alphabets in sorted path order, background first.
func (d *Dataset) Alphabets() []Alphabet { return d.alphabets }

// Images is the total number of images.
func (d *Dataset) Images() int { return d.imageFirst[len(d.imageFirst)-1] }

// Bytes is the size of the pixel store in memory.
func (d *Dataset) Bytes() int { return d.store.bytes() }

// Characters returns the number of characters of alphabet a.
func (d *Dataset) Characters(a int) int { return d.charFirst[a+1] - d.charFirst[a] }

// Drawings returns the number of images of character c of alphabet a.
func (d *Dataset) Drawings(a, c int) int {
	k := d.charFirst[a] + c
	return d.imageFirst[k+1] - d.imageFirst[k]
}

// Image returns the pixels of drawing j of character c of alphabet a
// (row-major, 0 background, 255 ink). Characters and drawings are numbered
// in sorted path order. Each call decodes the image into a new slice.
func (d *Dataset) Image(a, c, j int) []uint8 {
	img := make([]uint8, d.size*d.size)
	d.store.decode(d.imageFirst[d.charFirst[a]+c]+j, img)
	return img
}

// AlphabetsOf returns the indices of the alphabets of split s.
func (d *Dataset) AlphabetsOf(s Split) []int {
	var idx []int
	for i, a := range d.alphabets {
		if a.Split == s {
			idx = append(idx, i)
		}
	}
	return idx
}

// Options configures Load.
type Options struct {
	// Size is the side of the resized square images (the paper: 28).
	Size int
	// Resize is how the 105 x 105 images are shrunk to Size; "" is
	// Bilinear.
	Resize Resize
	// CachePath is the decoded-array cache file; "" means
	// ROOT/omniglot/decoded.cache.
	CachePath string
	// NoCache decodes without reading or writing a cache file.
	NoCache bool
	// Release is the content the data root must hold; nil means
	// Published(). Set it (from Describe) to load other data in Omniglot's
	// layout; the check is as strict as for the published release.
	Release *Release
}

// CacheName is the cache file's name in the omniglot directory.
const CacheName = "decoded.cache"

// maxSize bounds Options.Size so that a typo cannot request tens of
// gigabytes.
const maxSize = 512

// Load reads the Omniglot dataset of data root root (which holds
// omniglot/images_background.zip and omniglot/images_evaluation.zip, or the
// extracted folders), checks it against the published content (counts per
// set and SHA-256; opt.Release names other content), and returns every image resized to opt.Size. The decoded
// arrays are cached in one file keyed by the content hash and the resize
// settings and rebuilt when either changes; failing to write the cache is
// reported in Info.CacheErr, not as an error, so a read-only data root works.
func Load(root string, opt Options) (*Dataset, error) {
	if opt.Release != nil {
		return load(root, opt, opt.Release.list(), opt.Release.ContentSHA256)
	}
	return load(root, opt, sets, ContentSHA256)
}

func load(root string, opt Options, want []set, wantSum string) (*Dataset, error) {
	if opt.Size < 1 || opt.Size > maxSize {
		return nil, fmt.Errorf("omniglot: image size %d out of range [1, %d]", opt.Size, maxSize)
	}
	resize, err := ParseResize(string(opt.Resize))
	if err != nil {
		return nil, fmt.Errorf("omniglot: %w", err)
	}
	start := time.Now()
	srcs, sum, err := openChecked(root, want, wantSum)
	if err != nil {
		return nil, err
	}
	info := LoadInfo{Dir: filepath.Join(root, Dir), HashTime: time.Since(start)}
	key := cacheKey{ContentSHA256: sum, Size: opt.Size, Filter: resize.cacheFilter(), Pipeline: pipelineVersion}
	if !opt.NoCache {
		info.CachePath = opt.CachePath
		if info.CachePath == "" {
			info.CachePath = filepath.Join(root, Dir, resize.cacheName())
		}
		start = time.Now()
		d, err := readCache(info.CachePath, key)
		if err == nil {
			info.FromCache, info.LoadTime = true, time.Since(start)
			d.Info = info
			return d, nil
		}
		info.Rebuilt = err.Error()
	}
	start = time.Now()
	d, err := decodeAll(srcs, opt.Size, resize)
	if err != nil {
		return nil, dataError(root, err)
	}
	info.LoadTime = time.Since(start)
	if !opt.NoCache {
		info.CacheErr = writeCache(info.CachePath, key, d)
	}
	d.Info = info
	return d, nil
}

// Dir is the folder of a data root that holds the Omniglot files.
const Dir = "omniglot"

// openChecked opens every set of root/omniglot, checks the counts, and
// hashes the content: wantSum must match, else the error names the set whose
// own hash differs.
func openChecked(root string, want []set, wantSum string) ([]*source, string, error) {
	dir := filepath.Join(root, Dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, "", missingError(root, fmt.Sprintf("%s does not exist", dir))
	}
	var srcs []*source
	for _, s := range want {
		src, err := openSource(dir, s)
		if err == nil {
			err = src.checkCounts()
		}
		if err != nil {
			return nil, "", dataError(root, err)
		}
		srcs = append(srcs, src)
	}
	sum, perSet, err := contentSums(srcs)
	if err != nil {
		return nil, "", dataError(root, err)
	}
	if sum != wantSum {
		for i, s := range srcs {
			if perSet[i] != s.set.sha256 {
				return nil, "", dataError(root, fmt.Errorf("%s: content SHA-256 %s, want %s (corrupt or modified images)", s.where, perSet[i], s.set.sha256))
			}
		}
		return nil, "", dataError(root, fmt.Errorf("%s: content SHA-256 %s, want %s", dir, sum, wantSum))
	}
	return srcs, sum, nil
}
