package treetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiff: each kind of change to a tree is reported, naming the path,
// and an untouched tree reports nothing.
func TestDiff(t *testing.T) {
	cases := []struct {
		name   string
		change func(root string) error
		want   string
	}{
		{"nothing", func(string) error { return nil }, ""},
		{"one byte", func(root string) error { return os.WriteFile(filepath.Join(root, "a"), []byte("b"), 0o644) }, "changed " + "ROOT/a"},
		{"same size", func(root string) error { return os.WriteFile(filepath.Join(root, "d", "b"), []byte("y"), 0o644) }, "changed ROOT/d/b"},
		{"permissions", func(root string) error { return os.Chmod(filepath.Join(root, "a"), 0o600) }, "changed ROOT/a"},
		{"new file", func(root string) error { return os.WriteFile(filepath.Join(root, "d", "new"), nil, 0o644) }, "made ROOT/d/new"},
		{"removed", func(root string) error { return os.Remove(filepath.Join(root, "d", "b")) }, "removed ROOT/d/b"},
		{"link retargeted", func(root string) error {
			l := filepath.Join(root, "l")
			if err := os.Remove(l); err != nil {
				return err
			}
			return os.Symlink("d", l)
		}, "changed ROOT/l"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "a"), []byte("a"), 0o644)
			os.Mkdir(filepath.Join(root, "d"), 0o755)
			os.WriteFile(filepath.Join(root, "d", "b"), []byte("x"), 0o644)
			os.Symlink("a", filepath.Join(root, "l"))
			before := Of(t, root)
			if err := c.change(root); err != nil {
				t.Fatal(err)
			}
			got := before.Diff(Of(t, root))
			want := strings.ReplaceAll(c.want, "ROOT", root)
			if want == "" && got != "" || !strings.HasPrefix(got, want) || strings.Count(got, "\n") > 0 {
				t.Errorf("diff %q, want one line starting %q", got, want)
			}
		})
	}
}
