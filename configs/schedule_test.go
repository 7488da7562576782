package configs_test

import (
	. "github.com/trmaml/trmaml/configs"
	"strings"
	"testing"
)

func TestMetaSchedule(t *testing.T) {
	t.Parallel()
	c, err := Parse("x.yaml", []byte("meta:\n  lr: 1.0e-3\n  schedule: cosine\n  lr_min: 1.0e-6\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta.Schedule != "cosine" || c.Meta.LRMin != 1e-6 {
		t.Errorf("meta %+v", c.Meta)
	}
	if d := Defaults().Meta; d.Schedule != "constant" || d.LRMin != 0 {
		t.Errorf("default schedule %q, lr_min %v; want constant, 0", d.Schedule, d.LRMin)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"meta:\n  schedule: step\n", `x.yaml:2: meta.schedule = "step": must be one of constant, cosine`},
		{"meta:\n  lr: 1.0e-3\n  schedule: cosine\n  lr_min: 0.01\n", `x.yaml:4: meta.lr_min = 0.01: must be in [0, meta.lr] = [0, 0.001]`},
		{"meta:\n  lr_min: -1\n", `x.yaml:2: meta.lr_min = -1: must be in [0, meta.lr]`},
	} {
		if _, err := Parse("x.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
