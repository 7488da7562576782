package graph

import (
	"strings"
	"testing"

	"github.com/trmaml/trmaml/graph/internal/cpu"
)

// TestEngine: the engine names the machine, the BLAS and the loops.
func TestEngine(t *testing.T) {
	t.Parallel()
	e := Engine()
	for _, want := range []string{cpu.Machine(), "BLAS " + BLAS, "loops"} {
		if !strings.Contains(e, want) {
			t.Errorf("Engine %q does not name %q", e, want)
		}
	}
}
