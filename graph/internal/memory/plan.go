package memory

import "slices"

// Value is a large value of a program to place in its arena: Size values,
// alive from the step that computes it, First, to its last reader, Last.
type Value struct{ Size, First, Last int }

// align is the alignment, in values, of every place in an arena and of every
// part a pool lends: 64 bytes for float32.
const align = 16

// Plan places vals in one buffer so that no two alive at the same step
// overlap, and returns each one's offset (in values, aligned) and the
// buffer's size. It places the largest first, each in the smallest gap
// between the values already placed whose lifetimes meet its own that fits
// it, else above them (greedy by size): a program whose values come in
// many sizes (MAML's support and query activations) then needs about the
// most bytes it holds alive at once, where buffers reused only by equal
// sizes would hold each size's peak apart.
func Plan(vals []Value) (offsets []int, size int) {
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return vals[b].Size - vals[a].Size })
	offsets = make([]int, len(vals))
	var placed, meet []int // indices into vals, in order of placement
	for _, i := range order {
		v := vals[i]
		meet = meet[:0]
		for _, j := range placed {
			if vals[j].First <= v.Last && v.First <= vals[j].Last {
				meet = append(meet, j)
			}
		}
		slices.SortFunc(meet, func(a, b int) int { return offsets[a] - offsets[b] })
		best, gap, end := -1, 0, 0
		for _, j := range meet {
			if g := offsets[j] - end; g >= v.Size && (best < 0 || g < gap) {
				best, gap = end, g
			}
			end = max(end, roundUp(offsets[j]+vals[j].Size))
		}
		if best < 0 {
			best = end
		}
		offsets[i] = best
		size = max(size, best+v.Size)
		placed = append(placed, i)
	}
	return offsets, size
}

// roundUp rounds n up to a multiple of align.
func roundUp(n int) int { return (n + align - 1) &^ (align - 1) }
