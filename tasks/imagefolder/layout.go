package imagefolder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/trmaml/trmaml/data/imagecache"
)

// Split is one of the three sets of groups.
type Split int

const (
	// Train holds the meta-training groups.
	Train Split = iota
	// Validation holds the meta-validation groups (may be empty).
	Validation
	// Test holds the meta-test groups.
	Test
)

var splitNames = [3]string{"train", "validation", "test"}

func (s Split) String() string { return splitNames[s] }

// file is one image: its path and its name relative to the dataset folder.
type file struct{ path, rel string }

// class is a class's name and images, in name order.
type class struct {
	name  string
	files []file
}

// group is a task: its name and classes.
type group struct {
	name    string
	classes []class
}

// layout is what a folder holds, split and grouped as the config says.
type layout struct {
	dir    string
	splits [3][]group
	unused []string // groups or classes of the folder in no split
}

// Problem is one thing wrong with a dataset folder: the path and the rule
// it breaks.
type Problem struct{ Path, Rule string }

func (p Problem) String() string { return p.Path + ": " + p.Rule }

// DataError lists the problems found in a dataset folder.
type DataError struct {
	Dir      string
	Problems []Problem
}

// maxListed bounds the problems an error message lists.
const maxListed = 10

func (e *DataError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "image folder %s: %d problem(s):", e.Dir, len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "\n  ... and %d more (`trmaml data check` lists them all)", len(e.Problems)-maxListed)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// scanner collects the problems of one scan.
type scanner struct {
	cfg      *Config
	dir      string
	problems []Problem
}

func (sc *scanner) fail(path, rule string, args ...any) {
	sc.problems = append(sc.problems, Problem{path, fmt.Sprintf(rule, args...)})
}

// scan reads the folder dir as cfg lays it out. A folder that cannot be
// read at all is an error; everything else wrong is in the problems.
func scan(dir string, cfg *Config) (*layout, []Problem, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("image folder %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, nil, fmt.Errorf("image folder %s: not a folder", dir)
	}
	sc := &scanner{cfg: cfg, dir: dir}
	l := &layout{dir: dir}
	switch cfg.Layout {
	case "groups":
		var groups []group
		for _, g := range sc.subdirs(dir) {
			if !utf8.ValidString(g) {
				sc.fail(filepath.Join(dir, g), "%s", notUTF8(g))
				continue
			}
			gr := group{name: g}
			for _, c := range sc.subdirs(filepath.Join(dir, g)) {
				gr.classes = append(gr.classes, class{c, sc.images(filepath.Join(dir, g, c), filepath.Join(g, c))})
			}
			if len(gr.classes) == 0 {
				sc.fail(filepath.Join(dir, g), "a group without classes (folders of images)")
			}
			groups = append(groups, gr)
		}
		l.splits, l.unused = sc.splitGroups(groups)
	case "classes":
		var classes []class
		for _, c := range sc.subdirs(dir) {
			classes = append(classes, class{c, sc.images(filepath.Join(dir, c), c)})
		}
		sc.groupClasses(l, [3][]class{classes}, false)
	case "csv":
		var bySplit [3][]class
		seen := map[string]namedIn{}   // class -> the split file that names it first
		listed := map[string]namedIn{} // image -> the split file and line that list it
		for s, files := range cfg.CSV.of() {
			bySplit[s] = sc.csvClasses(Split(s), files, seen, listed)
		}
		sc.groupClasses(l, bySplit, true)
	}
	sc.sameFiles(l)
	if len(sc.problems) == 0 { // else the problems say why
		if len(l.splits[Train]) == 0 {
			sc.fail(dir, "no meta-training groups")
		}
		if len(l.splits[Test]) == 0 {
			sc.fail(dir, "no meta-test groups")
		}
	}
	return l, sc.problems, nil
}

// sameFiles refuses an image of the splits that is another's file through
// a symbolic link (a class folder linked into two groups, an image into
// two classes): it would be in two classes, or in meta-training and
// meta-test at once. The link is named, not the file it points to.
func (sc *scanner) sameFiles(l *layout) {
	first := map[string]string{} // the file's real path -> the path listing it first
	for _, groups := range l.splits {
		for _, g := range groups {
			for _, c := range g.classes {
				for _, f := range c.files {
					real, err := filepath.EvalSymlinks(f.path)
					if err != nil {
						continue // refused when it is read
					}
					const rule = "the same file as %s (through a symbolic link): an image belongs to one class of one split"
					switch prev, seen := first[real]; {
					case !seen:
						first[real] = f.path
					case f.path == real: // the file itself, after a link to it
						sc.fail(prev, rule, f.path)
					default:
						sc.fail(f.path, rule, prev)
					}
				}
			}
		}
	}
}

// subdirs lists the folders in dir by name, following symbolic links;
// files are skipped (CSV files and notes may sit beside the classes), as
// are hidden entries and the cache folder, but an image is a problem: it
// would not be used, as it is in no class.
func (sc *scanner) subdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		sc.fail(dir, "cannot be read: %v", unwrapPath(err))
		return nil
	}
	var names []string
	for _, e := range entries {
		if hidden(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p) // follows links: a loop is ELOOP
		if err != nil {
			sc.fail(p, "cannot be read: %v", unwrapPath(err))
			continue
		}
		switch {
		case fi.IsDir():
			names = append(names, e.Name())
		case isImageName(e.Name()):
			want := "DIR/CLASS/IMAGE"
			if sc.cfg.Layout == "groups" {
				want = "DIR/GROUP/CLASS/IMAGE"
			}
			sc.fail(p, "an image outside a class folder (layout %s: %s)", sc.cfg.Layout, want)
		}
	}
	return names
}

// images lists the images of a class folder; anything else in it is a
// problem.
func (sc *scanner) images(dir, rel string) []file {
	entries, err := os.ReadDir(dir)
	if err != nil {
		sc.fail(dir, "cannot be read: %v", unwrapPath(err))
		return nil
	}
	var files []file
	for _, e := range entries {
		if hidden(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			sc.fail(p, "cannot be read: %v", unwrapPath(err))
		case fi.IsDir():
			sc.fail(p, "a folder inside a class folder (want only images)")
		case !isImageName(e.Name()):
			sc.fail(p, "not a PNG or JPEG file (.png, .jpg, .jpeg)")
		default:
			files = append(files, file{p, filepath.ToSlash(filepath.Join(rel, e.Name()))})
		}
	}
	if len(files) == 0 && err == nil {
		sc.fail(dir, "an empty class (no images)")
	}
	return files
}

// notUTF8 is the rule a group name breaks that is not UTF-8: it names the
// task in every result file (JSON, CSV), which hold text.
func notUTF8(name string) string {
	return fmt.Sprintf("group name %q is not UTF-8 text, which the results (JSON, CSV) name each task in: rename it", name)
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") || name == imagecache.DirName }

func isImageName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg":
		return true
	}
	return false
}

// unwrapPath drops the path an os error repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
