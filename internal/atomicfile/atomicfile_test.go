package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
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
