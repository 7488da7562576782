package imagefolder

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/trmaml/trmaml/data/imagecache"
)

// Options is what Load needs of a config's section: the layout and the
// decoding settings.
type Options struct {
	Section Config
	NoCache bool // decode without reading or writing a cache
}

func optionsOf(s *Config) Options { return Options{Section: *s} }

// key is every setting that changes the decoded pixels, for the in-process
// and the on-disk cache, after the decoding's version: raised whenever a
// file decodes or is refused differently, so that no cache of the older
// decoding is served (a cache is looked up before any file is decoded).
func (o Options) key() string {
	s := o.Section
	return fmt.Sprintf("imagefolder/2 channels=%d convert=%v image=%dx%d resize=%s", s.Channels, s.Convert, s.Image[0], s.Image[1], s.Resize)
}

// loadKey is every field of the section that shapes a loaded Dataset (its
// splits, groups, pixels and statistics), for the runs of one experiment
// to share one: the section without the fields that shape only the
// instances (noun, ways, augmentation), so that a field added later is in
// the key until it is known not to matter.
func (o Options) loadKey() string {
	s := o.Section
	s.Noun, s.Ways, s.Rotate, s.RotateEval, s.Flip = "", 0, false, false, false
	return fmt.Sprintf("%+v", s)
}

// Dataset is a folder's images, split and grouped, decoded once into 8-bit
// pixels (H x W x C per image).
type Dataset struct {
	layout *layout
	set    *imagecache.Set
	// first[s][g][c] is the image index of split s, group g, class c's first
	// image; the class's images follow it in name order.
	first [3][][]int
	// Mean and Std are each channel's mean and standard deviation of the
	// meta-training images' values in [0, 1] (with Normalize only).
	Mean, Std []float64
	// Info says how the pixels were obtained.
	Info LoadInfo
}

// LoadInfo records where a Dataset's pixels came from.
type LoadInfo struct {
	Dir       string
	CachePath string        // the cache file read or written
	FromCache bool          // the pixels came from CachePath
	CacheErr  error         // writing the cache failed (the dataset is complete)
	HashTime  time.Duration // listing and hashing the files
	LoadTime  time.Duration // decoding, or reading the cache
}

// H, W and C are the images' height, width and channels.
func (d *Dataset) H() int { return d.set.H }
func (d *Dataset) W() int { return d.set.W }
func (d *Dataset) C() int { return d.set.C }

// Images is the number of images of all splits.
func (d *Dataset) Images() int { return d.set.Len() }

// Bytes is the size of the pixels in memory.
func (d *Dataset) Bytes() int { return len(d.set.Pix) }

// Groups lists split s's group names in task order.
func (d *Dataset) Groups(s Split) []string {
	var names []string
	for _, g := range d.layout.splits[s] {
		names = append(names, g.name)
	}
	return names
}

// Image returns the pixels of image j of class c of group g of split s
// (classes and images in name order), sharing the dataset's memory.
func (d *Dataset) Image(s Split, g, c, j int) []uint8 { return d.set.Image(d.first[s][g][c] + j) }

// Load reads the folder dir as opt lays it out, checks it, and decodes
// every image of the splits (or reads them from the cache of package
// data/imagecache, beside the data or in the user cache folder). Every
// problem found is in a *DataError.
func Load(dir string, opt Options) (*Dataset, error) {
	start := time.Now()
	l, problems, err := scan(dir, &opt.Section)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &DataError{dir, problems}
	}
	d := &Dataset{layout: l, Info: LoadInfo{Dir: dir}}
	var paths, rels []string
	for s, groups := range l.splits {
		d.first[s] = make([][]int, len(groups))
		for g, gr := range groups {
			for _, c := range gr.classes {
				d.first[s][g] = append(d.first[s][g], len(paths))
				for _, f := range c.files {
					paths, rels = append(paths, f.path), append(rels, f.rel)
				}
			}
		}
	}
	content, sums, err := imagecache.Hash(paths, rels)
	if err != nil {
		return nil, fmt.Errorf("image folder %s: %w", dir, err)
	}
	d.Info.HashTime = time.Since(start)
	start = time.Now()
	build := func() (*imagecache.Set, error) { return decodeAll(dir, paths, sums, &opt.Section) }
	if opt.NoCache {
		d.set, err = build()
	} else {
		var info imagecache.Info
		d.set, info, err = imagecache.Load(dir, imagecache.Key{Content: content, Settings: opt.key()}, build)
		d.Info.CachePath, d.Info.FromCache, d.Info.CacheErr = info.Path, info.FromCache, info.WriteErr
	}
	if err != nil {
		return nil, err
	}
	d.Info.LoadTime = time.Since(start)
	if opt.Section.Normalize {
		d.Mean, d.Std = d.stats()
	}
	return d, nil
}

// decodeAll decodes every file on as many goroutines as there are CPUs,
// into one set of the config's size and channels (inferred from the first
// file when not stated), refusing a file whose content is no longer the
// SHA-256 of sums (the files' hashes in the cache's key).
func decodeAll(dir string, paths []string, sums [][32]byte, s *Config) (*imagecache.Set, error) {
	h, w, c := s.Image[0], s.Image[1], s.Channels
	if len(paths) == 0 {
		return nil, &DataError{dir, []Problem{{dir, "no images"}}}
	}
	if h == 0 || c == 0 {
		w0, h0, c0, ok := firstHeader(paths)
		if !ok { // every file is refused by its own header
			w0, h0, c0 = 1, 1, 3
		}
		if h == 0 {
			h, w = h0, w0
		}
		if c == 0 {
			c = c0
		}
	}
	set := &imagecache.Set{H: h, W: w, C: c, Pix: make([]uint8, len(paths)*h*w*c)}
	problems := make([]*Problem, len(paths))
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := newDecoder(h, w, c, s.Convert, s.Resize)
			dec.keep = s.Image[0] == 0
			for k := range next {
				if err := dec.decodeFile(paths[k], &sums[k], set.Image(k)); err != nil {
					problems[k] = &Problem{paths[k], err.Error()}
				}
			}
		}()
	}
	for k := range paths {
		next <- k
	}
	close(next)
	wg.Wait()
	var list []Problem
	for _, p := range problems {
		if p != nil {
			list = append(list, *p)
		}
	}
	if len(list) > 0 {
		return nil, &DataError{dir, list}
	}
	return set, nil
}

// stats are each channel's mean and standard deviation of the values in
// [0, 1] over the meta-training images.
func (d *Dataset) stats() (mean, std []float64) {
	c := d.set.C
	var hist = make([][256]int64, c)
	n := d.set.H * d.set.W * c
	for g := range d.first[Train] {
		for ci, first := range d.first[Train][g] {
			count := len(d.layout.splits[Train][g].classes[ci].files)
			pix := d.set.Pix[first*n : (first+count)*n]
			for ch := range c {
				h := &hist[ch]
				for i := ch; i < len(pix); i += c {
					h[pix[i]]++
				}
			}
		}
	}
	mean, std = make([]float64, c), make([]float64, c)
	for ch := range c {
		var total, sum, sq float64
		for v, k := range hist[ch] {
			x := float64(v) / 255
			total += float64(k)
			sum += float64(k) * x
			sq += float64(k) * x * x
		}
		if total > 0 {
			mean[ch] = sum / total
			std[ch] = math.Sqrt(max(sq/total-mean[ch]*mean[ch], 0))
		}
	}
	return mean, std
}
