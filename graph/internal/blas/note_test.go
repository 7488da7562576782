package blas

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph/internal/cpu"
)

// TestNote: a note only when OPENBLAS_CORETYPE forced kernels below
// the CPU's level, naming the variable, both levels and the remedy, or
// when OpenBLAS chose its SSE kernels on an AVX-512 CPU by itself.
func TestNote(t *testing.T) {
	avx512 := map[string]bool{"avx": true, "avx2": true, "fma": true, "avx512f": true}
	avx2 := map[string]bool{"avx": true, "avx2": true, "fma": true}
	for _, c := range []struct {
		forced, core string
		flags        map[string]bool
		want         []string // substrings; none means no note
	}{
		{"Haswell", "Haswell", avx512, []string{"OPENBLAS_CORETYPE=Haswell", "AVX2 kernels (Haswell)", "a CPU with AVX-512", "about half", "env -u OPENBLAS_CORETYPE"}},
		{"Nehalem", "Nehalem", avx512, []string{"SSE kernels (Nehalem)", "a third or less"}},
		{"Piledriver", "Piledriver", avx2, []string{"AVX kernels (Piledriver)"}},
		{"Bogus", "Haswell", avx512, nil}, // a name OpenBLAS ignored: not the variable's doing
		{"haswell", "Haswell", avx512, []string{"OPENBLAS_CORETYPE=haswell"}},
		{"Nehalem", "Nehalem", avx2, []string{"SSE kernels (Nehalem)", "a CPU with AVX2"}},
		{"Sandybridge", "Sandybridge", map[string]bool{"avx": true, "avx2": true}, nil}, // AVX2 without FMA: the AVX level
		{"Sandybridge", "Sandybridge", avx2, []string{"AVX kernels (Sandybridge)", "a CPU with AVX2,"}},
		{"", "Haswell", avx512, nil}, // OpenBLAS's own choice
		{"", "Prescott", avx512, []string{"does not know this CPU", "SSE kernels (Prescott)", "OPENBLAS_CORETYPE=SkylakeX"}},
		{"", "Prescott", avx2, nil},               // only AVX-512 CPUs are known to fall back
		{"Haswell", "Haswell", avx2, nil},         // the CPU's own level
		{"SkylakeX", "SkylakeX", avx2, nil},       // above the CPU: OpenBLAS falls back itself
		{"Haswell", "", avx512, nil},              // no OpenBLAS (gonum's BLAS)
		{"Haswell", "Haswell", nil, nil},          // no /proc/cpuinfo
		{"Neoversen1", "NeoverseN1", avx512, nil}, // kernels it does not know
	} {
		got := note(c.forced, c.core, cpu.Level(c.flags))
		if (got != "") != (c.want != nil) {
			t.Errorf("note(%q, %q, %v) = %q, want a note: %v", c.forced, c.core, c.flags, got, c.want != nil)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("note(%q, %q, %v) = %q, want it to contain %q", c.forced, c.core, c.flags, got, w)
			}
		}
	}
}
