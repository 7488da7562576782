package cpu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCPUInfo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, model string
		flags             []string
		absent            []string
	}{
		{"epyc", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9R45\nflags\t\t: fpu avx2 fma avx512f\n\nprocessor\t: 1\nmodel name\t: other\n",
			"AMD EPYC 9R45", []string{"avx2", "fma", "avx512f"}, []string{"amx_tile"}},
		{"no model", "processor\t: 0\nflags\t: sse2\n", "", []string{"sse2"}, []string{"avx2"}},
		{"empty", "", "", nil, []string{"avx2"}},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		model, flags := Info(path)
		if model != tc.model {
			t.Errorf("%s: model %q, want %q", tc.name, model, tc.model)
		}
		for _, f := range tc.flags {
			if !flags[f] {
				t.Errorf("%s: flag %s missing from %v", tc.name, f, flags)
			}
		}
		for _, f := range tc.absent {
			if flags[f] {
				t.Errorf("%s: flag %s should be absent", tc.name, f)
			}
		}
	}
	if m, f := Info(filepath.Join(dir, "missing")); m != "" || f != nil {
		t.Errorf("missing file: %q %v, want nothing", m, f)
	}
	if m := Machine(); !strings.Contains(m, "CPUs") {
		t.Errorf("Machine %q: want the CPU count", m)
	}
}
