package imagefolder

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/trmaml/trmaml/configs"
)

// DataCheck implements configs.DataChecker: it reads the folder dir (""
// means the config's task.imagefolder.dir) as c lays it out, decodes every
// image with c's settings without writing anything, and prints the groups,
// classes and images of each split with their counts and sizes, then every
// problem found: unreadable or non-image files, mixed channels or sizes,
// groups and classes too small for c's instances. It returns an error
// when there is a problem.
func (Family) DataCheck(c configs.Config, dir string, w io.Writer) error {
	s := Section(c)
	if dir == "" {
		if s.Dir == "" {
			return &configs.ConfigError{Field: "task.imagefolder.dir", Problem: "names no folder: pass DIR or set it"}
		}
		var err error
		if dir, err = resolveDir(s.Dir, c.Data.Root, ""); err != nil {
			return err
		}
	}
	l, problems, err := scan(dir, s)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "image folder %s, layout %s\n\n", dir, s.Layout)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "split\t%s\tclasses\timages\tfewest classes\tfewest images\t\n", plural(s.Noun))
	var paths []string
	for sp, groups := range l.splits {
		classes, images, fewestC, fewestI := 0, 0, 0, 0
		for i, g := range groups {
			classes += len(g.classes)
			if i == 0 || len(g.classes) < fewestC {
				fewestC = len(g.classes)
			}
			for j, cl := range g.classes {
				images += len(cl.files)
				if (i == 0 && j == 0) || len(cl.files) < fewestI {
					fewestI = len(cl.files)
				}
				for _, f := range cl.files {
					paths = append(paths, f.path)
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", splitNames[sp], len(groups), classes, images, fewestC, fewestI)
	}
	tw.Flush()
	fmt.Fprintln(w)
	random := !s.GroupSizes.empty()
	for sp, groups := range l.splits {
		for _, g := range groups {
			images := 0
			for _, cl := range g.classes {
				images += len(cl.files)
			}
			fmt.Fprintf(w, "%-10s %s %s: %d classes, %d images", splitNames[sp], s.Noun, g.name, len(g.classes), images)
			if random || s.GroupFile != "" {
				var names []string
				for _, cl := range g.classes {
					names = append(names, cl.name)
				}
				fmt.Fprintf(w, " (%s)", strings.Join(names, ", "))
			}
			fmt.Fprintln(w)
		}
	}
	if len(l.unused) > 0 {
		fmt.Fprintf(w, "not used (in no split): %s\n", strings.Join(l.unused, ", "))
	}

	sizes, channels, decodeProblems, turned := inspect(paths, s)
	problems = append(problems, decodeProblems...)
	fmt.Fprintf(w, "\nimages: %d files;", len(paths))
	for _, k := range slices.Sorted(maps.Keys(sizes)) {
		fmt.Fprintf(w, " %d of %s", sizes[k], k)
	}
	fmt.Fprintf(w, " (width x height); %d greyscale, %d colour\n", channels[1], channels[3])
	if len(turned) > 0 {
		fmt.Fprintf(w, "%d JPEG(s) carry an EXIF orientation other than upright, which is not applied: the pixels are used as\nstored, as PIL and torchvision read them, not turned as a viewer shows them:\n", len(turned))
		for i, p := range turned {
			if i == maxListed {
				fmt.Fprintf(w, "  ... and %d more\n", len(turned)-maxListed)
				break
			}
			fmt.Fprintf(w, "  %s (%s)\n", p.Path, p.Rule)
		}
	}
	h, wd, ch := s.Image[0], s.Image[1], s.Channels
	if ch == 0 {
		if _, _, c0, ok := firstHeader(paths); ok {
			ch = c0
		}
	}
	if h == 0 && len(sizes) == 1 {
		for k := range sizes {
			fmt.Sscanf(k, "%dx%d", &wd, &h)
		}
	}
	if h > 0 && ch > 0 {
		fmt.Fprintf(w, "decoded: %dx%dx%d (height x width x channels, %s resize), 8-bit: %.1f MB in memory and in the cache\n",
			h, wd, ch, s.Resize, float64(len(paths)*h*wd*ch)/1e6)
	}
	t := c.Task
	fmt.Fprintf(w, "instances: %d-way, %d shot(s) + %d query image(s) per class in training, %d in evaluation\n", s.Ways, t.Support, t.Query, c.Eval.Query)
	for _, q := range slices.Compact([]int{t.Query, c.Eval.Query}) {
		for sp, groups := range l.splits {
			for _, short := range shortfalls(groups, Spec{Ways: s.Ways, Shots: t.Support, Queries: q}) {
				problems = append(problems, Problem{dir, splitNames[sp] + ": " + short})
			}
		}
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "\nno problems found")
		return nil
	}
	fmt.Fprintf(w, "\n%d problem(s):\n", len(problems))
	for _, p := range problems {
		fmt.Fprintln(w, "  "+p.String())
	}
	return fmt.Errorf("data check: %d problem(s) in %s", len(problems), dir)
}

// inspect decodes every file with the section's settings into a scratch
// buffer, counting the source sizes ("WxH") and channels and listing the
// problems and the JPEGs with an EXIF orientation other than upright, on
// as many goroutines as there are CPUs.
func inspect(paths []string, s *Config) (sizes map[string]int, channels [4]int, problems []Problem, turned []Problem) {
	sizes = map[string]int{}
	if len(paths) == 0 {
		return sizes, channels, nil, nil
	}
	h, w, c := s.Image[0], s.Image[1], s.Channels
	keep := h == 0
	w0, h0, c0, ok := firstHeader(paths)
	if ok {
		if keep {
			h, w = h0, w0
		}
		if c == 0 {
			c = c0
		}
	}
	if c == 0 {
		c = 3
	}
	var mu sync.Mutex
	next := make(chan int, 64)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := newDecoder(max(h, 1), max(w, 1), c, s.Convert, s.Resize)
			dec.keep = keep
			out := make([]uint8, max(h, 1)*max(w, 1)*c)
			for k := range next {
				sw, sh, sc, err := decodeConfig(paths[k])
				if err == nil {
					err = dec.decode(paths[k], out)
				}
				o := exifOrientation(paths[k])
				mu.Lock()
				if o != 1 {
					turned = append(turned, Problem{paths[k], fmt.Sprintf("%d: %s", o, orientations[o])})
				}
				if err != nil {
					problems = append(problems, Problem{paths[k], err.Error()})
				} else {
					sizes[fmt.Sprintf("%dx%d", sw, sh)]++
					channels[sc]++
				}
				mu.Unlock()
			}
		}()
	}
	for k := range paths {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, list := range [][]Problem{problems, turned} {
		slices.SortFunc(list, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	}
	return sizes, channels, problems, turned
}

// plural is the English plural of a task noun.
func plural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "y") && !strings.HasSuffix(noun, "ey"):
		return noun[:len(noun)-1] + "ies"
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"):
		return noun + "es"
	}
	return noun + "s"
}
