package display

import (
	"testing"

	"github.com/trmaml/trmaml/metalearn"
)

func TestScore(t *testing.T) {
	t.Parallel()
	mse, acc := Of(metalearn.MSE), Of(metalearn.Accuracy)
	for _, c := range []struct{ got, want string }{
		{mse.Axis("task"), "task MSE"},
		{acc.Axis("final task"), "final task accuracy (%)"},
		{Of(metalearn.Metric{Name: "mae"}).Axis(""), "mae"},
	} {
		if c.got != c.want {
			t.Errorf("axis %q, want %q", c.got, c.want)
		}
	}
	if acc.Show(0.875) != 87.5 || mse.Show(0.25) != 0.25 {
		t.Error("Show does not scale accuracy to percent or keeps MSE")
	}
	if !acc.HigherIsBetter || mse.HigherIsBetter || acc.Max() != 1 {
		t.Error("Score does not carry the metric's direction and bound")
	}
}

// TestMethodNames: every registered method has a display name; swept
// settings are written by their symbol or key.
func TestMethodNames(t *testing.T) {
	t.Parallel()
	for _, info := range metalearn.Methods() {
		if Method(info.Name) == info.Name {
			t.Errorf("method %q has no display name", info.Name)
		}
	}
	for name, want := range map[string]string{"cvar": "a", "drmaml": "alpha", "trmaml": "", "nonesuch": ""} {
		if got := SweptSymbol(name); got != want {
			t.Errorf("SweptSymbol(%q) = %q, want %q", name, got, want)
		}
	}
	if Method("nonesuch") != "nonesuch" {
		t.Error("an unknown method is not shown under its name")
	}
}
