package imagefolder

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// splitGroups assigns groups to the splits: by the config's lists (in
// their order) or by fractions at random from the seed (each split in name
// order). It returns the groups of no split.
func (sc *scanner) splitGroups(groups []group) ([3][]group, []string) {
	var splits [3][]group
	byName := map[string]int{}
	for i, g := range groups {
		byName[g.name] = i
	}
	used := make([]bool, len(groups))
	if !sc.cfg.Splits.empty() {
		where := map[string]string{}
		for s, names := range sc.cfg.Splits.of() {
			for _, name := range names {
				i, ok := byName[name]
				switch {
				case where[name] != "":
					sc.fail(sc.dir, "task.imagefolder.splits: group %q is in %s and in %s", name, where[name], splitNames[s])
				case !ok:
					sc.fail(sc.dir, "task.imagefolder.splits.%s names group %q, which the folder does not have", splitNames[s], name)
				default:
					splits[s] = append(splits[s], groups[i])
					used[i] = true
				}
				if where[name] == "" {
					where[name] = splitNames[s]
				}
			}
		}
	} else if f := sc.cfg.Fractions; len(f) == 3 {
		order := sc.rng().Perm(len(groups))
		nTrain := int(f[0]*float64(len(groups)) + 0.5)
		nVal := int(f[1]*float64(len(groups)) + 0.5)
		for rank, i := range order {
			s := Test
			switch {
			case rank < nTrain:
				s = Train
			case rank < nTrain+nVal:
				s = Validation
			}
			splits[s] = append(splits[s], groups[i])
			used[i] = true
		}
		for s := range splits {
			slices.SortFunc(splits[s], func(a, b group) int { return strings.Compare(a.name, b.name) })
		}
	}
	var unused []string
	for i, g := range groups {
		if !used[i] {
			unused = append(unused, g.name)
		}
	}
	return splits, unused
}

// rng is the stream of the random splits and groups.
func (sc *scanner) rng() *rand.Rand { return rand.New(rand.NewPCG(sc.cfg.Seed, 0x696d616765666f6c)) }

// groupClasses forms the groups of the classes of each split (one list,
// bySplit[0], when split is false: the groups are split afterwards) from
// the group file or the group sizes.
func (sc *scanner) groupClasses(l *layout, bySplit [3][]class, split bool) {
	cfg := sc.cfg
	if cfg.GroupFile != "" {
		mapping := sc.groupFile(filepath.Join(sc.dir, cfg.GroupFile))
		var groups []group
		index := map[string]int{}
		splitOf := map[string]int{}
		for s, classes := range bySplit {
			for _, c := range classes {
				g, ok := mapping[c.name]
				if !ok {
					l.unused = append(l.unused, c.name)
					continue
				}
				if prev, seen := splitOf[g]; seen && prev != s {
					sc.fail(filepath.Join(sc.dir, cfg.GroupFile), "group %q has classes in %s and in %s (a group lies in one split)", g, splitNames[prev], splitNames[s])
					continue
				}
				splitOf[g] = s
				i, ok := index[g]
				if !ok {
					i = len(groups)
					index[g] = i
					groups = append(groups, group{name: g})
				}
				groups[i].classes = append(groups[i].classes, c)
			}
		}
		slices.SortFunc(groups, func(a, b group) int { return strings.Compare(a.name, b.name) })
		if !split {
			l.splits, l.unused = sc.splitGroups(groups)
			return
		}
		for _, g := range groups {
			l.splits[splitOf[g.name]] = append(l.splits[splitOf[g.name]], g)
		}
		return
	}
	rng := sc.rng()
	sizes := cfg.GroupSizes.of()
	if !split { // one pool: shuffled once, cut into the train, validation and test groups in turn
		pool := bySplit[0]
		total := 0
		for _, s := range sizes {
			for _, n := range s {
				total += n
			}
		}
		if total != len(pool) {
			sc.fail(sc.dir, "task.imagefolder.group_sizes add up to %d classes, the folder has %d", total, len(pool))
			return
		}
		perm := rng.Perm(len(pool))
		at := 0
		for s := range sizes {
			l.splits[s], at = cut(pool, perm, at, sizes[s], splitNames[s])
		}
		return
	}
	for s, classes := range bySplit {
		total := 0
		for _, n := range sizes[s] {
			total += n
		}
		if total != len(classes) {
			sc.fail(sc.dir, "task.imagefolder.group_sizes.%s add up to %d classes, the %s split files name %d", splitNames[s], total, splitNames[s], len(classes))
			continue
		}
		l.splits[s], _ = cut(classes, rng.Perm(len(classes)), 0, sizes[s], splitNames[s])
	}
}

// cut takes groups of the given sizes from classes in the order perm,
// starting at perm[at]; each group's classes in name order.
func cut(classes []class, perm []int, at int, sizes []int, split string) ([]group, int) {
	var groups []group
	for g, n := range sizes {
		gr := group{name: fmt.Sprintf("%s-%d", split, g+1)}
		for _, i := range perm[at : at+n] {
			gr.classes = append(gr.classes, classes[i])
		}
		slices.SortFunc(gr.classes, func(a, b class) int { return strings.Compare(a.name, b.name) })
		groups = append(groups, gr)
		at += n
	}
	return groups, at
}

// groupFile reads a CSV of "class,group" rows (a first row "class,group"
// is a header) into a map; a class given twice is a problem.
func (sc *scanner) groupFile(path string) map[string]string {
	m := map[string]string{}
	sc.readCSV(path, "class", func(line int, class, group string) {
		if !utf8.ValidString(group) {
			sc.fail(path, "line %d: %s", line, notUTF8(group))
			return
		}
		if prev, ok := m[class]; ok {
			sc.fail(path, "line %d: class %q again (already in group %q): a class belongs to one group", line, class, prev)
			return
		}
		m[class] = group
	})
	return m
}

// csvClasses reads the split files of one split: "filename,label" rows
// (a first row "filename,label" is a header), images under the images
// folder. seen maps each class to the file, and its split, that named it
// first: a class may be in several files of one split, not in two splits;
// listed maps each image (its cleaned path under the images folder) to
// the file and line that listed it: an image is in one class of one split.
func (sc *scanner) csvClasses(split Split, files []string, seen map[string]namedIn, listed map[string]namedIn) []class {
	images := filepath.Join(sc.dir, sc.cfg.Images)
	var classes []class
	index := map[string]int{}
	for _, name := range files {
		path := filepath.Join(sc.dir, name)
		sc.readCSV(path, "filename", func(line int, filename, label string) {
			if prev, ok := seen[label]; !ok {
				seen[label] = namedIn{file: path, split: split}
			} else if prev.split != split {
				sc.fail(path, "line %d: class %q is in %s too, of split %s: a class belongs to one split", line, label, prev.file, prev.split)
				return
			}
			p := filepath.Join(images, filepath.FromSlash(filename))
			key := filepath.ToSlash(filepath.Clean(filepath.FromSlash(filename)))
			switch fi, err := os.Stat(p); {
			case !filepath.IsLocal(filepath.FromSlash(filename)): // absolute, or leaving the folder by ".."
				sc.fail(path, "line %d: %q must be a file under %s", line, filename, images)
				return
			case listed[key].file != "":
				sc.fail(path, "line %d: %s is listed in %s too (line %d): an image belongs to one class of one split", line, key, listed[key].file, listed[key].line)
				return
			case err != nil:
				sc.fail(path, "line %d: %s: %v", line, p, unwrapPath(err))
				return
			case fi.IsDir() || !isImageName(filename):
				sc.fail(path, "line %d: %s is not a PNG or JPEG file", line, p)
				return
			}
			listed[key] = namedIn{file: path, line: line}
			i, ok := index[label]
			if !ok {
				i = len(classes)
				index[label] = i
				classes = append(classes, class{name: label})
			}
			rel := filepath.ToSlash(filepath.Join(sc.cfg.Images, filename))
			classes[i].files = append(classes[i].files, file{p, rel})
		})
	}
	for i := range classes {
		slices.SortFunc(classes[i].files, func(a, b file) int { return strings.Compare(a.rel, b.rel) })
	}
	slices.SortFunc(classes, func(a, b class) int { return strings.Compare(a.name, b.name) })
	return classes
}

// namedIn is the split file, its split and line, that names a class or an
// image first.
type namedIn struct {
	file  string
	split Split
	line  int
}

// readCSV calls row for every two-field row of the CSV at path, skipping a
// header whose first field is header and a UTF-8 byte order mark.
func (sc *scanner) readCSV(path, header string, row func(line int, a, b string)) {
	f, err := os.Open(path)
	if err != nil {
		sc.fail(path, "cannot be read: %v", unwrapPath(err))
		return
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" { // a spreadsheet's UTF-8 byte order mark
		br.Discard(3)
	}
	r := csv.NewReader(br)
	r.FieldsPerRecord = 2
	r.TrimLeadingSpace = true
	for first := true; ; first = false {
		rec, err := r.Read()
		if err == io.EOF {
			return
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			sc.fail(path, "%v (want two fields per row: %s,...)", err, header)
			return
		}
		if first && rec[0] == header {
			continue
		}
		if rec[0] == "" || rec[1] == "" {
			sc.fail(path, "line %d: an empty field", line)
			continue
		}
		row(line, rec[0], rec[1])
	}
}
