package imagefolder

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/internal/treetest"
)

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBadInputRefused: every kind of bad folder of the issue is refused
// before training with the path and the rule, and nothing is written into
// the folder.
func TestBadInputRefused(t *testing.T) {
	splits := SplitLists{Train: []string{"g1"}, Test: []string{"g2"}}
	for _, tc := range []struct {
		name  string
		harm  func(t *testing.T, dir string)
		edit  func(*Config)
		path  string // relative to the folder
		rule  string
		root  bool // the case needs a non-root user
		noErr bool // loads, and the refusal comes from the task set
	}{
		{name: "corrupt file", harm: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "g1/g1c01/00.png"), "not an image at all")
		}, path: "g1/g1c01/00.png", rule: "not a readable PNG or JPEG"},
		{name: "truncated file", harm: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "g1/g1c02/03.png")
			b, _ := os.ReadFile(p)
			writeFile(t, p, string(b[:len(b)/2]))
		}, path: "g1/g1c02/03.png", rule: "not a readable PNG file"},
		{name: "non-image file", harm: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "g2/g2c01/notes.txt"), "hello")
		}, path: "g2/g2c01/notes.txt", rule: "not a PNG or JPEG file"},
		{name: "empty class", harm: func(t *testing.T, dir string) {
			os.Mkdir(filepath.Join(dir, "g1/g1c09"), 0o755)
		}, path: "g1/g1c09", rule: "an empty class"},
		{name: "symlink loop", harm: func(t *testing.T, dir string) {
			os.Symlink("loop.png", filepath.Join(dir, "g1/g1c01/loop.png"))
		}, path: "g1/g1c01/loop.png", rule: "cannot be read: too many levels of symbolic links"},
		{name: "unreadable folder", root: true, harm: func(t *testing.T, dir string) {
			os.Chmod(filepath.Join(dir, "g2/g2c03"), 0)
			t.Cleanup(func() { os.Chmod(filepath.Join(dir, "g2/g2c03"), 0o755) })
		}, path: "g2/g2c03", rule: "cannot be read: permission denied"},
		{name: "mixed sizes without a resize", harm: func(t *testing.T, dir string) {
			writeImage(t, filepath.Join(dir, "g2/g2c02/05.png"), synthImage(1, 1, 5, 12, 10, false))
		}, path: "g2/g2c02/05.png", rule: "10x12 (width x height), other images 8x8: mixed sizes need task.imagefolder.image"},
		{name: "mixed channels", harm: func(t *testing.T, dir string) {
			writeImage(t, filepath.Join(dir, "g2/g2c02/05.png"), synthImage(1, 1, 5, 8, 8, true))
		}, path: "g2/g2c02/05.png", rule: "greyscale, want colour"},
		{name: "declared channels", edit: func(s *Config) { s.Channels = 1 },
			path: "g1/g1c01/00.png", rule: "colour, want greyscale (task.imagefolder.channels = 1"},
		{name: "split names a missing group", edit: func(s *Config) { s.Splits.Validation = []string{"g7"} },
			path: "", rule: `task.imagefolder.splits.validation names group "g7", which the folder does not have`},
		{name: "image in a group folder", harm: func(t *testing.T, dir string) {
			writeImage(t, filepath.Join(dir, "g1/stray.png"), synthImage(0, 0, 0, 8, 8, false))
		}, path: "g1/stray.png", rule: "an image outside a class folder (layout groups: DIR/GROUP/CLASS/IMAGE)"},
		{name: "image beside the groups", harm: func(t *testing.T, dir string) {
			writeImage(t, filepath.Join(dir, "stray.jpg"), synthImage(0, 0, 0, 8, 8, false))
		}, path: "stray.jpg", rule: "an image outside a class folder (layout groups: DIR/GROUP/CLASS/IMAGE)"},
		{name: "class folder linked into two groups", harm: func(t *testing.T, dir string) {
			os.Symlink(filepath.Join(dir, "g1/g1c01"), filepath.Join(dir, "g2/g2c09"))
		}, path: "g2/g2c09/00.png", rule: "the same file as "},
		{name: "image linked into another class", harm: func(t *testing.T, dir string) {
			os.Symlink("../g1c02/03.png", filepath.Join(dir, "g1/g1c01/link.png"))
		}, path: "g1/g1c01/link.png", rule: "the same file as "},
		{name: "group name not UTF-8", harm: func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "g2"), filepath.Join(dir, "caf\xe9"))
		}, edit: func(s *Config) { s.Splits, s.Fractions = SplitLists{}, []float64{0.5, 0, 0.5} },
			path: "caf\xe9", rule: `group name "caf\xe9" is not UTF-8 text`},
		{name: "group in two splits", edit: func(s *Config) { s.Splits.Test = []string{"g2", "g1"} },
			path: "", rule: `task.imagefolder.splits: group "g1" is in train and in test`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() == 0 {
				t.Skip("root reads unreadable folders")
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			dir := tree{groups: 2, classes: 8, images: 6, h: 8, w: 8}.write(t)
			if tc.harm != nil {
				tc.harm(t, dir)
			}
			before := treetest.Of(t, dir)
			s := section(func(s *Config) { s.Splits = splits; s.Splits.Test = slices.Clone(splits.Test) })
			if tc.edit != nil {
				tc.edit(&s)
			}
			_, err := Load(dir, Options{Section: s})
			want := strings.TrimSuffix(filepath.Join(dir, tc.path), "/") + ": " + tc.rule
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Load: %v\nwant a problem %q", err, want)
			}
			if _, ok := err.(*DataError); !ok {
				t.Errorf("error of type %T, want *DataError", err)
			}
			if diff := before.Diff(treetest.Of(t, dir)); diff != "" {
				t.Errorf("a refused load changed the folder:\n%s", diff)
			}
		})
	}
}

// TestTooSmallRefused: a group with fewer than N classes and classes with
// fewer than K + J images are refused by name, all of them.
func TestTooSmallRefused(t *testing.T) {
	dir := tree{groups: 2, classes: 6, images: 5, h: 4, w: 4}.write(t)
	os.RemoveAll(filepath.Join(dir, "g2/g2c06"))
	os.Remove(filepath.Join(dir, "g1/g1c03/04.png"))
	d, err := Load(dir, Options{NoCache: true, Section: section(func(s *Config) {
		s.Splits = SplitLists{Train: []string{"g1"}, Test: []string{"g2"}}
	})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewTaskSet(d, Train, Spec{Ways: 5, Shots: 1, Queries: 4})
	if err == nil || !strings.Contains(err.Error(), "class g1c03 of group g1 has 4 images, 1 shots + 4 queries need 5") {
		t.Errorf("train: %v", err)
	}
	_, err = NewTaskSet(d, Test, Spec{Ways: 6, Shots: 1, Queries: 1})
	if err == nil || !strings.Contains(err.Error(), "group g2 has 5 classes, 6-way instances need 6") {
		t.Errorf("test: %v", err)
	}
}

// TestConvert: with convert, a greyscale file among colour ones is copied
// into the three channels, and a colour file among greyscale ones becomes
// its luma.
func TestConvert(t *testing.T) {
	dir := tree{groups: 2, classes: 2, images: 2, h: 4, w: 4}.write(t)
	writeImage(t, filepath.Join(dir, "g1/g1c01/00.png"), synthImage(0, 0, 0, 4, 4, true))
	d, err := Load(dir, Options{NoCache: true, Section: section(func(s *Config) {
		s.Convert, s.Channels = true, 3
		s.Splits = SplitLists{Train: []string{"g1"}, Test: []string{"g2"}}
	})})
	if err != nil {
		t.Fatal(err)
	}
	img := d.Image(Train, 0, 0, 0)
	g := pixelOf(0, 0, 0, 2, 1).G
	if p := img[(1*4+2)*3:][:3]; p[0] != g || p[1] != g || p[2] != g {
		t.Errorf("converted grey pixel %v, want %d three times", p, g)
	}
	d, err = Load(dir, Options{NoCache: true, Section: section(func(s *Config) {
		s.Convert, s.Channels = true, 1
		s.Splits = SplitLists{Train: []string{"g1"}, Test: []string{"g2"}}
	})})
	if err != nil {
		t.Fatal(err)
	}
	p := pixelOf(1, 1, 1, 3, 2)
	// color.GrayModel: (19595 R + 38470 G + 7471 B + 1<<15) >> 24 on 16-bit values.
	r, gg, b := uint32(p.R)*0x101, uint32(p.G)*0x101, uint32(p.B)*0x101
	want := uint8((19595*r + 38470*gg + 7471*b + 1<<15) >> 24)
	if got := d.Image(Test, 0, 1, 1)[2*4+3]; got != want {
		t.Errorf("luma %d, want %d", got, want)
	}
}

// writeCSVLayout writes DIR/images/*.jpg and train.csv, val.csv, test.csv
// of classes n000..n(classes-1) split 6/2/4 times the factor, with a
// header row, and a class,group file.
func writeCSVLayout(t testing.TB, classes, images, side int) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]*strings.Builder{}
	groups := &strings.Builder{}
	groups.WriteString("class,group\n")
	for c := range classes {
		split := "train.csv"
		switch {
		case c >= classes*8/12:
			split = "test.csv"
		case c >= classes*6/12:
			split = "val.csv"
		}
		if files[split] == nil {
			files[split] = &strings.Builder{}
			files[split].WriteString("filename,label\n")
		}
		label := fmt.Sprintf("n%03d", c)
		fmt.Fprintf(groups, "%s,%s-%d\n", label, strings.TrimSuffix(split, ".csv"), c%2)
		for j := range images {
			name := fmt.Sprintf("%s%08d.jpg", label, j)
			writeImage(t, filepath.Join(dir, "images", name), synthImage(0, c, j, side, side, false))
			fmt.Fprintf(files[split], "%s,%s\n", name, label)
		}
	}
	for name, b := range files {
		writeFile(t, filepath.Join(dir, name), b.String())
	}
	writeFile(t, filepath.Join(dir, "groups.csv"), groups.String())
	return dir
}

// TestCSVLayout: mini-ImageNet's layout with the TR-MAML code's random
// groups (sizes from the config, the same groups for the same seed, other
// groups for another) and with a class,group file.
func TestCSVLayout(t *testing.T) {
	dir := writeCSVLayout(t, 24, 3, 6)
	cfg := func(seed uint64) Config {
		return section(func(s *Config) {
			s.Layout, s.Seed, s.Ways = "csv", seed, 2
			s.CSV = SplitLists{Train: []string{"train.csv"}, Test: []string{"val.csv", "test.csv"}}
			s.GroupSizes = SizeLists{Train: []int{3, 4, 5}, Test: []int{5, 7}}
		})
	}
	l1, problems, err := scan(dir, ptr(cfg(1)))
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	names := func(l *layout) (out [][]string) {
		for _, s := range l.splits {
			for _, g := range s {
				var cs []string
				for _, c := range g.classes {
					cs = append(cs, c.name)
				}
				out = append(out, append([]string{g.name}, cs...))
			}
		}
		return out
	}
	got := names(l1)
	if len(got) != 5 || got[0][0] != "train-1" || len(got[0]) != 4 || got[4][0] != "test-2" || len(got[4]) != 8 {
		t.Fatalf("groups %v", got)
	}
	seen := map[string]bool{}
	for _, g := range got {
		for _, c := range g[1:] {
			if seen[c] {
				t.Errorf("class %s in two groups", c)
			}
			seen[c] = true
			n := 0
			fmt.Sscanf(c, "n%d", &n)
			if (n < 12) != strings.HasPrefix(g[0], "train") {
				t.Errorf("class %s of the wrong split in group %s", c, g[0])
			}
		}
	}
	l1b, _, _ := scan(dir, ptr(cfg(1)))
	l2, _, _ := scan(dir, ptr(cfg(2)))
	if !slices.EqualFunc(names(l1b), got, slices.Equal) || slices.EqualFunc(names(l2), got, slices.Equal) {
		t.Error("the groups do not follow the seed")
	}

	withFile := section(func(s *Config) {
		s.Layout, s.Ways, s.GroupFile = "csv", 2, "groups.csv"
		s.CSV = SplitLists{Train: []string{"train.csv"}, Validation: []string{"val.csv"}, Test: []string{"test.csv"}}
	})
	d, err := Load(dir, Options{NoCache: true, Section: withFile})
	if err != nil {
		t.Fatal(err)
	}
	if g := d.Groups(Validation); !slices.Equal(g, []string{"val-0", "val-1"}) || d.C() != 3 || d.H() != 6 {
		t.Errorf("validation groups %v, %dx%dx%d", g, d.H(), d.W(), d.C())
	}

	// Bad CSV input: a missing file, a class in two splits, a class twice
	// in the group file; each named with its file and line.
	writeFile(t, filepath.Join(dir, "bad.csv"), "filename,label\nn00000000000.jpg,n000\nmissing.jpg,n100\nn01200000000.jpg,n012\n")
	writeFile(t, filepath.Join(dir, "dup.csv"), "class,group\nn000,a\nn000,b\n")
	writeFile(t, filepath.Join(dir, "latin1.csv"), "class,group\nn000,caf\xe9\n")
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(s *Config) { s.CSV.Validation = []string{"bad.csv"} }, "bad.csv: line 3: " + filepath.Join(dir, "images", "missing.jpg") + ": no such file"},
		{func(s *Config) { s.CSV.Validation = []string{"bad.csv"} }, `bad.csv: line 2: class "n000" is in ` + filepath.Join(dir, "train.csv") + " too"},
		{func(s *Config) { s.GroupFile = "dup.csv" }, `dup.csv: line 3: class "n000" again (already in group "a")`},
		{func(s *Config) { s.GroupFile = "latin1.csv" }, `latin1.csv: line 2: group name "caf\xe9" is not UTF-8 text`},
	} {
		s := withFile
		tc.edit(&s)
		before := treetest.Of(t, dir)
		_, err := Load(dir, Options{Section: s})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load: %v\nwant %q", err, tc.want)
		}
		if diff := before.Diff(treetest.Of(t, dir)); diff != "" {
			t.Errorf("a refused load changed the folder:\n%s", diff)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// withExtraCSV is writeCSVLayout's section with the group file and a
// second training split file, extra.csv.
func withExtraCSV() Config {
	return section(func(s *Config) {
		s.Layout, s.Ways, s.GroupFile = "csv", 2, "groups.csv"
		s.CSV = SplitLists{Train: []string{"train.csv", "extra.csv"}, Validation: []string{"val.csv"}, Test: []string{"test.csv"}}
	})
}

// TestCSVImageListedTwice: an image is in one class of one split: listed
// again, in the same file, another file or another split's, under the
// same name or another spelling of its path, it is refused with both
// places (an image in a training and a test class would leak between
// meta-training and meta-test).
func TestCSVImageListedTwice(t *testing.T) {
	dir := writeCSVLayout(t, 12, 3, 4)
	val := "n00600000000.jpg" // the first image of val.csv's first class
	for _, tc := range []struct{ row, want string }{
		{val + ",n900", "val.csv: line 2: n00600000000.jpg is listed in " + filepath.Join(dir, "extra.csv") + " too (line 2): an image belongs to one class of one split"},
		{"./" + val + ",n900", "val.csv: line 2: n00600000000.jpg is listed in " + filepath.Join(dir, "extra.csv") + " too (line 2)"},
		{"n00000000000.jpg,n900", "is listed in " + filepath.Join(dir, "train.csv") + " too (line 2)"},
	} {
		writeFile(t, filepath.Join(dir, "extra.csv"), "filename,label\n"+tc.row+"\n")
		_, problems, err := scan(dir, ptr(withExtraCSV()))
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 1 || !strings.Contains(problems[0].String(), tc.want) {
			t.Errorf("%s: problems %v, want one with %q", tc.row, problems, tc.want)
		}
	}
}

// TestCSVClassInTwoFilesOfASplit: a split may list several files, and a
// class's images may be in more than one of them (the class is the
// union); only a class in files of two splits is refused.
func TestCSVClassInTwoFilesOfASplit(t *testing.T) {
	dir := writeCSVLayout(t, 12, 3, 4)
	b, err := os.ReadFile(filepath.Join(dir, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")                               // header, then 3 images per class
	writeFile(t, filepath.Join(dir, "train-a.csv"), strings.Join(lines[:3], ""))                         // n000's first two
	writeFile(t, filepath.Join(dir, "train-b.csv"), "filename,label\n"+strings.Join(lines[3:], "")+"\n") // the rest
	s := section(func(s *Config) {
		s.Layout, s.Ways, s.GroupFile = "csv", 2, "groups.csv"
		s.CSV = SplitLists{Train: []string{"train.csv"}, Validation: []string{"val.csv"}, Test: []string{"test.csv"}}
	})
	one, problems, err := scan(dir, &s)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	s.CSV.Train = []string{"train-a.csv", "train-b.csv"}
	two, problems, err := scan(dir, &s)
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	if !reflect.DeepEqual(one.splits, two.splits) {
		t.Errorf("two files of a split give other groups than one file")
	}
	s.CSV.Validation = []string{"val.csv", "train-a.csv"}
	s.CSV.Train = []string{"train-b.csv"}
	if _, problems, _ := scan(dir, &s); len(problems) == 0 || !strings.Contains(problems[0].Rule, "train-b.csv too, of split train: a class belongs to one split") {
		t.Errorf("a class in two splits: %v", problems)
	}
}

// TestCSVFileNames: a split file's file names are paths under the images
// folder: a name with two dots in it is a name, a path leaving the folder
// is refused with its line.
func TestCSVFileNames(t *testing.T) {
	dir := writeCSVLayout(t, 12, 3, 4)
	writeImage(t, filepath.Join(dir, "images", "n000..copy.jpg"), synthImage(0, 0, 9, 4, 4, false))
	writeImage(t, filepath.Join(dir, "outside.jpg"), synthImage(0, 0, 9, 4, 4, false))
	for _, tc := range []struct{ name, want string }{
		{"n000..copy.jpg", ""},
		{"./n000..copy.jpg", ""},
		{"../outside.jpg", `line 2: "../outside.jpg" must be a file under`},
		{"sub/../../outside.jpg", `line 2: "sub/../../outside.jpg" must be a file under`},
		{filepath.Join(dir, "outside.jpg"), "must be a file under"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(dir, "extra.csv"), "filename,label\n"+tc.name+",n900\n")
			_, problems, err := scan(dir, ptr(withExtraCSV()))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("problems %v, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0].Rule, tc.want)):
				t.Errorf("problems %v, want one with %q", problems, tc.want)
			}
		})
	}
}

// TestCSVFromSpreadsheet: split and group files saved by a spreadsheet
// (Excel's "CSV UTF-8": a byte order mark first, CRLF line ends) read as
// the plain files do; the mark is not part of the header's first field.
func TestCSVFromSpreadsheet(t *testing.T) {
	dir := writeCSVLayout(t, 12, 3, 4)
	s := section(func(s *Config) {
		s.Layout, s.Ways, s.GroupFile = "csv", 2, "groups.csv"
		s.CSV = SplitLists{Train: []string{"train.csv"}, Validation: []string{"val.csv"}, Test: []string{"test.csv"}}
	})
	plain, err := Load(dir, Options{NoCache: true, Section: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"train.csv", "val.csv", "test.csv", "groups.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), "\ufeff"+strings.ReplaceAll(string(b), "\n", "\r\n"))
	}
	excel, err := Load(dir, Options{NoCache: true, Section: s})
	if err != nil {
		t.Fatal(err)
	}
	for sp := range splitNames {
		if !slices.Equal(plain.Groups(Split(sp)), excel.Groups(Split(sp))) {
			t.Errorf("%s groups %v, plain %v", Split(sp), excel.Groups(Split(sp)), plain.Groups(Split(sp)))
		}
	}
	if !slices.Equal(plain.set.Pix, excel.set.Pix) {
		t.Error("the images differ")
	}
}

// TestClassesLayout: flat class folders grouped at random by sizes (one
// shuffle of all classes, train groups first) or by a group file whose
// groups are split by fractions from the seed.
func TestClassesLayout(t *testing.T) {
	dir := t.TempDir()
	var mapping strings.Builder
	for c := range 12 {
		name := fmt.Sprintf("k%02d", c)
		writeImage(t, filepath.Join(dir, name, "a.png"), synthImage(0, c, 0, 4, 4, false))
		fmt.Fprintf(&mapping, "%s,grp%d\n", name, c/2)
	}
	writeFile(t, filepath.Join(dir, "map.csv"), mapping.String())
	l, problems, err := scan(dir, ptr(section(func(s *Config) {
		s.Layout, s.GroupSizes = "classes", SizeLists{Train: []int{3, 4}, Validation: []int{2}, Test: []int{3}}
	})))
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	seen := map[string]bool{}
	for s, want := range [][]int{{3, 4}, {2}, {3}} {
		for g, n := range want {
			gr := l.splits[s][g]
			if len(gr.classes) != n || gr.name != fmt.Sprintf("%s-%d", splitNames[s], g+1) {
				t.Errorf("%s group %d: %s of %d classes, want %d", splitNames[s], g, gr.name, len(gr.classes), n)
			}
			for _, c := range gr.classes {
				if seen[c.name] {
					t.Errorf("class %s twice", c.name)
				}
				seen[c.name] = true
			}
		}
	}
	if len(seen) != 12 {
		t.Errorf("%d classes grouped, want 12", len(seen))
	}
	_, problems, _ = scan(dir, ptr(section(func(s *Config) {
		s.Layout, s.GroupSizes = "classes", SizeLists{Train: []int{3, 4}, Test: []int{3}}
	})))
	if len(problems) != 1 || !strings.Contains(problems[0].Rule, "group_sizes add up to 10 classes, the folder has 12") {
		t.Errorf("sizes of 10 classes: %v", problems)
	}

	l, problems, err = scan(dir, ptr(section(func(s *Config) {
		s.Layout, s.GroupFile, s.Fractions = "classes", "map.csv", []float64{0.5, 0.2, 0.3}
	})))
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	if n := []int{len(l.splits[0]), len(l.splits[1]), len(l.splits[2])}; !slices.Equal(n, []int{3, 1, 2}) {
		t.Errorf("6 groups split %v by fractions 0.5, 0.2, 0.3, want [3 1 2]", n)
	}
	for _, s := range l.splits {
		for _, g := range s {
			if len(g.classes) != 2 {
				t.Errorf("group %s has %d classes, want its 2", g.name, len(g.classes))
			}
		}
	}
}
