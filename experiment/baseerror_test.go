package experiment

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/trmaml/trmaml/configs"
	"github.com/trmaml/trmaml/run"
)

// TestSweepValueErrorsNameTheirPlace: a sweep value the base cannot take
// is named at its own line of the experiment file, once, without the base
// file around it; an error that lies in the base file names the base
// field, the base file and its line.
func TestSweepValueErrorsNameTheirPlace(t *testing.T) {
	t.Parallel()
	const head = "name: bs\nbase: %s\nalgorithms: [trmaml]\norders: [second]\nseeds: [1]\nsweep:\n"
	exp := func(base, sweep string) string { return strings.Replace(head, "%s", base, 1) + sweep }
	lrMin := strings.Replace(tinyBase, "batch: 10}", "batch: 10, lr: 0.01, lr_min: 0.005}", 1)
	for _, tc := range []struct {
		name, base, exp string
		want            string // the whole error; EXP and BASE stand for the files' paths
	}{
		{"out of range", tinyBase, exp("base.yaml", "  inner.alpha: [0.1, -1]\n"),
			"EXP:7: sweep inner.alpha = -1: must be > 0"},
		{"wrong type", tinyBase, exp("base.yaml", "  inner.alpha: [0.1, fast]\n"),
			`EXP:7: sweep inner.alpha: cannot use "fast" (string): want a number`},
		{"built-in base", "", exp("sine_quick", "  inner.alpha: [0.1, -1]\n"),
			"EXP:7: sweep inner.alpha = -1: must be > 0"},
		{"neither a file nor a built-in", "", exp("sine_quik", "  inner.alpha: [0.1]\n"),
			`EXP:2: base = "sine_quik": no file DIR/sine_quik and no built-in config "sine_quik" (available: ` + strings.Join(configs.BuiltinNames(), ", ") + ")"},
		{"the base's own error", tinyBase + "inner: {alpha: -1}\n", exp("base.yaml", "  inner.steps: [1, 2]\n"),
			`EXP:2: base = "base.yaml": BASE:5: inner.alpha = -1: must be > 0`},
		// The base's meta.lr_min is fine alone and not with the swept meta.lr.
		{"the base's and a sweep value's", lrMin, exp("base.yaml", "  meta.lr: [0.001]\n  inner.alpha: [-1]\n"),
			`EXP:2: base = "base.yaml": BASE:3: meta.lr_min = 0.005: must be in [0, meta.lr] = [0, 0.001]` + "\nEXP:8: sweep inner.alpha = -1: must be > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"exp.yaml": tc.exp}
			if tc.base != "" {
				files["base.yaml"] = tc.base
			}
			dir := writeFiles(t, files)
			_, _, err := Load(filepath.Join(dir, "exp.yaml"), run.Options{})
			want := strings.NewReplacer("EXP", filepath.Join(dir, "exp.yaml"), "BASE", filepath.Join(dir, "base.yaml"), "DIR", dir).Replace(tc.want)
			if err == nil || err.Error() != want {
				t.Errorf("error\n%v\nwant\n%s", err, want)
			}
		})
	}
}
