package shell

import (
	"os/exec"
	"testing"
)

// TestQuote: each word, quoted, is read back by sh as that word.
func TestQuote(t *testing.T) {
	for _, w := range []string{"plain/path-1.yaml", "it's", "sl;$(x)", "a b", "`id`", "$HOME", "", "x'\"\\y", "*?[", "new\nline"} {
		q := Quote(w)
		out, err := exec.Command("sh", "-c", "printf %s "+q).Output()
		if err != nil {
			t.Fatalf("%q quoted %s: %v", w, q, err)
		}
		if string(out) != w {
			t.Errorf("%q quoted %s: the shell reads %q", w, q, out)
		}
	}
	if got := Quote("it's"); got != `'it'\''s'` {
		t.Errorf("Quote(it's) = %s", got)
	}
}
