package memory

import (
	"testing"

	"gorgonia.org/tensor"
)

// TestArenaHold: an arena held for values side by side is as large as
// their aligned sizes together, and never shrinks; a pool then lends every
// one of them a part of its buffer at once, allocating nothing more.
func TestArenaHold(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		hold []int
		want int
	}{
		{"grows to the aligned sum", 100, []int{60, 60}, 64 + 64},
		{"already large enough", 500, []int{60, 60}, 500},
		{"one value", 10, []int{33}, 48},
		{"nothing", 10, nil, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool()
			a := NewArena(p, tensor.Float32, tc.size)
			a.Hold(tc.hold...)
			if a.Size() != tc.want {
				t.Fatalf("size %d, want %d", a.Size(), tc.want)
			}
			a.Get(0, tensor.Shape{1}) // a run takes the arena's buffer
			a.Put()                   // and hands it back
			held := p.Bytes()
			for _, n := range tc.hold {
				p.Get(tensor.Float32, n)
			}
			if p.Bytes() != held {
				t.Errorf("the pool grew from %d to %d bytes lending %v side by side", held, p.Bytes(), tc.hold)
			}
		})
	}
}
