package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The user docs keep the shape issue 37 gave them: README.md at most 10 KB
// and docs/performance.md at most 20 KB; generated figures and tables under
// docs/figures/, not among the prose pages; no timestamps or load averages
// in the prose (measurements name the command that made them, the history
// is in git log).

func TestDocsSizes(t *testing.T) {
	root := ".."
	for _, c := range []struct {
		path string
		max  int64
	}{
		{"README.md", 10_000},
		{filepath.Join("docs", "performance.md"), 20_000},
	} {
		st, err := os.Stat(filepath.Join(root, c.path))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > c.max {
			t.Errorf("%s is %d bytes, more than %d: say it shorter, or move detail into a page of docs/", c.path, st.Size(), c.max)
		}
	}
}

func TestDocsGeneratedFilesInFigures(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasSuffix(e.Name(), ".md") {
			t.Errorf("docs/%s: generated files go under docs/figures/", e.Name())
		}
	}
}

func TestDocsNoTimestamps(t *testing.T) {
	stamp := regexp.MustCompile(`(?i)load average|\b[0-2]?\d:[0-5]\d UTC\b|\b20\d\d-[01]\d-[0-3]\d\b|\b(January|February|March|April|May|June|July|August|September|October|November|December) 20\d\d\b`)
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, filepath.Join("..", "README.md")) {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if m := stamp.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: docs state measurements with their command, not when they were made", filepath.Base(p), i+1, m)
			}
		}
	}
}
