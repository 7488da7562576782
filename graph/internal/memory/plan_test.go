package memory

import (
	"math/rand/v2"
	"testing"
)

// TestPlan: no two values alive at one step overlap, every place is
// aligned, and the buffer is at least the most values alive at once; where
// that peak can be reached by putting the values born after a large one
// died into its place, the plan reaches it.
func TestPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var random []Value
	for range 300 {
		first := rng.IntN(200)
		random = append(random, Value{Size: 1 + rng.IntN(5000), First: first, Last: first + rng.IntN(30)})
	}
	for _, tt := range []struct {
		name string
		vals []Value
		want int // the size, 0 to check only that it is valid
	}{
		{"none", nil, 0},
		{"one", []Value{{Size: 5, First: 0, Last: 0}}, 5},
		// A value of 96, then two of 48 and 40 in its place while one of
		// 32 lives throughout: an exact-size pool would hold 96+48+40+32.
		{"smaller ones in a larger one's place", []Value{
			{Size: 32, First: 0, Last: 9}, {Size: 96, First: 1, Last: 3},
			{Size: 48, First: 4, Last: 6}, {Size: 40, First: 5, Last: 9},
		}, 32 + 96},
		{"the same step", []Value{{Size: 10, First: 3, Last: 3}, {Size: 10, First: 3, Last: 3}}, 26},
		// 64 dies at step 1; 40 takes its place, and 16 the exact gap
		// between 40 (aligned to 48) and 48, which lives throughout.
		{"an exact fit", []Value{
			{Size: 64, First: 0, Last: 1}, {Size: 48, First: 0, Last: 9},
			{Size: 40, First: 2, Last: 9}, {Size: 16, First: 2, Last: 9},
		}, 64 + 48},
		// Placed in the order given, 64 would go above both 16s.
		{"the largest first", []Value{
			{Size: 16, First: 0, Last: 1}, {Size: 16, First: 0, Last: 3}, {Size: 64, First: 2, Last: 3},
		}, 64 + 16},
		// 224 alive at step 3; the first or the largest gap that fits
		// instead of the smallest needs 256.
		{"the smallest gap", []Value{
			{Size: 48, First: 2, Last: 3}, {Size: 32, First: 1, Last: 2}, {Size: 64, First: 3, Last: 6},
			{Size: 48, First: 1, Last: 3}, {Size: 64, First: 1, Last: 4}, {Size: 48, First: 1, Last: 1},
		}, 224},
		{"one step apart", []Value{{Size: 32, First: 0, Last: 4}, {Size: 32, First: 5, Last: 9}}, 32},
		{"zero size", []Value{{Size: 0, First: 0, Last: 9}, {Size: 16, First: 2, Last: 3}}, 16},
		{"random", random, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			offsets, size := Plan(tt.vals)
			peak := 0
			for step := range 300 {
				live := 0
				for _, v := range tt.vals {
					if v.First <= step && step <= v.Last {
						live += v.Size
					}
				}
				peak = max(peak, live)
			}
			for i, v := range tt.vals {
				if offsets[i]%align != 0 || offsets[i] < 0 || offsets[i]+v.Size > size {
					t.Fatalf("value %d (%d values) at %d of %d", i, v.Size, offsets[i], size)
				}
				for j, u := range tt.vals[:i] {
					if v.First <= u.Last && u.First <= v.Last && offsets[i] < offsets[j]+u.Size && offsets[j] < offsets[i]+v.Size {
						t.Fatalf("values %d and %d are alive at once and overlap: %v at %d, %v at %d", j, i, u, offsets[j], v, offsets[i])
					}
				}
			}
			if size < peak || tt.want > 0 && size != tt.want {
				t.Errorf("buffer of %d values, want %d (at most %d alive at once)", size, tt.want, peak)
			}
			t.Logf("%d values alive at most, buffer of %d", peak, size)
		})
	}
}
