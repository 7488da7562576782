package cputime

import "testing"

// TestProcessCountsWork: a loop of about 0.1 s of work moves the process's
// time forward by at least part of it, and never backward.
func TestProcessCountsWork(t *testing.T) {
	before, ok := Process()
	if !ok {
		t.Skip("no processor time on this platform")
	}
	s := 0.0
	for x := 0.0; x < 1e8; x++ {
		s += x
	}
	after, _ := Process()
	if d := after - before; d < 20e6 || s < 0 {
		t.Errorf("about 0.1 s of work moved the process's CPU time by %v", d)
	}
}
