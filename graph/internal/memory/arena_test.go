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

// TestArena: the values of an arena are their places in one buffer of the
// pool, taken with the first and handed back with the last.
func TestArena(t *testing.T) {
	p := NewPool()
	a := NewArena(p, tensor.Float32, 64)
	x := a.Get(0, tensor.Shape{4, 4})
	y := a.Get(16, tensor.Shape{48})
	x.Float32s()[0], y.Float32s()[47] = 1, 2
	if x.Shape().TotalSize() != 16 || !x.Shape().Eq(tensor.Shape{4, 4}) || len(p.Free()) != 0 {
		t.Fatalf("value of shape %v, %d free buffers", x.Shape(), len(p.Free()))
	}
	a.Put()
	if len(p.Free()) != 0 {
		t.Fatal("the buffer went back with a value still taken")
	}
	a.Put()
	free := p.Free()
	if len(free) != 1 || free[0].Shape().TotalSize() != 64 {
		t.Fatalf("free buffers %v, want one of 64", free)
	}
	if d := free[0].Float32s(); d[0] != 1 || d[63] != 2 {
		t.Errorf("the values are not the buffer's: %v %v", d[0], d[63])
	}
}
