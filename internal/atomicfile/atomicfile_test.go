package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, content := range []string{"first", "second"} {
		if err := Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Fatalf("read %q, want %q", got, content)
		}
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	// A failing writer leaves the old content and no temporary file.
	fail := errors.New("disk full")
	err := WriteFunc(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return fail
	})
	if !errors.Is(err, fail) {
		t.Fatalf("error %v, want %v", err, fail)
	}
	if got, _ := os.ReadFile(path); string(got) != "second" {
		t.Errorf("a failed write changed the file to %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left, want 1", len(entries))
	}
}

// TestCleanTemps: the temporary files of interrupted writes (as os.CreateTemp
// names them) are removed, and nothing else is.
func TestCleanTemps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := []string{"checkpoint.json", ".lock", ".x.tmp", "a.tmp123", ".b.tmpx1", ".tmp1"}
	stray := []string{".checkpoint.json.tmp2837461", ".metrics.csv.tmp1"}
	for _, n := range append(append([]string(nil), keep...), stray...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A real interrupted write's temp name, made the way WriteFunc makes it.
	f, err := os.CreateTemp(dir, ".model.json.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	removed, err := CleanTemps(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 3 {
		t.Errorf("removed %v, want the 3 temporary files", removed)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if len(left) != len(keep) {
		t.Errorf("left %v, want %v", left, keep)
	}
}
