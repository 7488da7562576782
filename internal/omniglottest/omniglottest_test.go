package omniglottest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands in for the test given to Root and records a skip or a
// failure instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

type stopped struct{}

func (r *recorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...); panic(stopped{}) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// root calls Root with a recorder.
func root(t *testing.T) (dir string, r *recorder) {
	r = &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil && v != (stopped{}) {
			panic(v)
		}
	}()
	return Root(r), r
}

func TestRootSkipsOrFailsWithoutData(t *testing.T) {
	if testing.Short() {
		t.Skip("Root skips at once with -short")
	}
	empty := t.TempDir()
	t.Setenv(EnvData, empty)
	t.Setenv(EnvRequire, "")
	_, r := root(t)
	for _, want := range []string{t.Name() + ": real Omniglot archives not found", filepath.Join(empty, "omniglot", "images_background.zip"), "$" + EnvData, "trmaml data omniglot -dir DIR"} {
		if !strings.Contains(r.skipped, want) || r.failed != "" || strings.Contains(r.skipped, "\n") {
			t.Errorf("skip %q, failure %q: want one skip line containing %q", r.skipped, r.failed, want)
		}
	}
	t.Setenv(EnvRequire, "1")
	_, r = root(t)
	if r.skipped != "" || !strings.Contains(r.failed, EnvRequire+"=1 makes this a failure") {
		t.Errorf("with %s=1: skip %q, failure %q", EnvRequire, r.skipped, r.failed)
	}
}

func TestRootFindsTheArchives(t *testing.T) {
	if testing.Short() {
		t.Skip("Root skips at once with -short")
	}
	fx := WriteFixture(t, 1) // stands in for the real archives: Root checks only that they exist
	t.Setenv(EnvData, fx.Root)
	t.Setenv(EnvRequire, "1")
	got, r := root(t)
	if got != fx.Root || r.skipped != "" || r.failed != "" {
		t.Errorf("Root %q (skip %q, failure %q), want %q", got, r.skipped, r.failed, fx.Root)
	}
}

// TestFixtureLayout: the archives hold SET/ALPHABET/characterNN/NNNN_MM.png
// with the counts WriteFixture reports, the same bytes for the same seed,
// within the size the package promises.
func TestFixtureLayout(t *testing.T) {
	a, b := WriteFixture(t, 7), WriteFixture(t, 7)
	chars := 0
	for _, al := range FixtureAlphabets {
		chars += al.Characters
	}
	if a.Background.Characters+a.Evaluation.Characters != chars || a.Background.Images+a.Evaluation.Images != chars*Drawings {
		t.Errorf("counts %+v %+v, want %d characters of %d drawings", a.Background, a.Evaluation, chars, Drawings)
	}
	size := int64(0)
	for _, name := range Archives {
		x, err := os.ReadFile(filepath.Join(a.Root, "omniglot", name))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b.Root, "omniglot", name))
		if string(x) != string(y) {
			t.Errorf("%s differs between two fixtures of the same seed", name)
		}
		size += int64(len(x))
	}
	if size > 500<<10 {
		t.Errorf("archives total %d bytes, want a few hundred KB", size)
	}
	if a.SHA256 == WriteFixture(t, 8).SHA256 {
		t.Error("another seed wrote the same images")
	}
}
