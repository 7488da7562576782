package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsCode normalises Go source for comparing a page's snippet with the
// file it is taken from: comments and blank lines dropped, runs of spaces
// made one, and "if STMT; err != nil {" reduced to STMT, since the pages
// elide error checks.
func docsCode(src string) []string {
	ifErr := regexp.MustCompile(`^if (.*); err != nil \{$`)
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		l = strings.Join(strings.Fields(stripComment(l)), " ") // gofmt aligns excerpts apart
		if m := ifErr.FindStringSubmatch(l); m != nil {
			l = m[1]
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// stripComment cuts a line's // comment, outside string literals.
func stripComment(l string) string {
	var quote byte // the open literal's delimiter, 0 outside
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case quote == 0 && c == '/' && strings.HasPrefix(l[i:], "//"):
			return l[:i]
		case quote == 0 && (c == '"' || c == '`' || c == '\''):
			quote = c
		case quote != 0 && quote != '`' && c == '\\':
			i++
		case c == quote:
			quote = 0
		}
	}
	return l
}

// TestExtendingExamplesAreTheTestedCode: the worked examples of
// docs/extending.md (a new method, a new task family, a new model, a new
// inner loop) are excerpts of the files the tests compile and run, line
// for line in order (comments, blank lines and error checks aside), so
// that the page cannot drift from the code it shows.
func TestExtendingExamplesAreTheTestedCode(t *testing.T) {
	t.Parallel()
	page := docsPage(t, "extending.md")
	sources := map[string]string{ // a snippet's first line -> its file
		"type Tilted struct {":       "run/example_method_test.go",
		"type Slopes struct{}":       "tasks/example_family_test.go",
		"func (m ResConv) Forward(x": "examples/custommodel/resconv.go",
		"type MetaSGD struct{ Steps": "examples/innerloops/metasgd_example_test.go",
	}
	found := map[string]bool{}
	for _, block := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(page, -1) {
		snippet := docsCode(block[1])
		if len(snippet) == 0 {
			continue
		}
		var file string
		for first, f := range sources {
			if strings.HasPrefix(snippet[0], first) {
				file = f
			}
		}
		if file == "" {
			continue // a sketch of a call, not an excerpt
		}
		found[file] = true
		raw, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		code, k := docsCode(string(raw)), 0
		for _, l := range snippet {
			for k < len(code) && code[k] != l {
				k++
			}
			if k == len(code) {
				t.Errorf("docs/extending.md: the excerpt of %s has %q, which the file does not have (after the excerpt's previous lines)", file, l)
				break
			}
			k++
		}
	}
	for _, f := range sources {
		if !found[f] {
			t.Errorf("docs/extending.md shows no excerpt of %s", f)
		}
	}
}
