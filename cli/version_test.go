package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVersionIsChangelogs checks that `trmaml version` prints the release
// that CHANGELOG.md's newest entry describes.
func TestVersionIsChangelogs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## v?(\d+\.\d+\.\d+)`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("CHANGELOG.md has no entry headed '## vX.Y.Z'")
	}
	var out bytes.Buffer
	if err := dispatch([]string{"version"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if want := "trmaml " + string(m[1]) + " "; !strings.HasPrefix(out.String(), want) {
		t.Errorf("trmaml version printed %q, want it to start with %q (CHANGELOG.md's newest entry)", out.String(), want)
	}
	if err := dispatch([]string{"version", "x"}, &out, &out); err == nil {
		t.Error("trmaml version x: accepted an argument")
	}
}
