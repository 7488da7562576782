package regname

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, want string // want "" for a name allowed
	}{
		{"tilted", ""},
		{"trmaml_entropic", ""},
		{"conv4", ""},
		{"", "a name must be a lowercase letter"},
		{"my method", "a name must be"},
		{"cvar.plus", "a name must be"},
		{"a/b", "a name must be"},
		{"dro-maml", "a name must be"},
		{"Tilted", "a name must be"},
		{"4way", "a name must be"},
		{"meta", "the name is a fixed key"},
	} {
		err := Check("method", c.name, ConfigKeys)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `method "`+c.name+`"`)) {
			t.Errorf("Check(%q): %v, want %q", c.name, err, c.want)
		}
	}
}
