package graph

// tuning chooses among the engine's ways of computing the same values (up
// to rounding) where the defaults choose by size: tests set it to take
// every way at small sizes, each test its own, so they run in parallel.
// The zero value is the defaults. A CNN (its tune) carries it into the
// geometry of its ops and their derivatives; an objective (newObjective)
// into its program.
type tuning struct {
	// winograd, if not 0, makes every conv, convT and convK take the
	// Winograd path with output tiles of this size (2 or 4), or none (-1).
	winograd int
	// chunkValues, if not 0, bounds a convolution chunk's patch values
	// instead of chunkValues (1: one image per chunk).
	chunkValues int
	// blockBack fuses the CNN's first block in graphs that differentiate
	// it once in every dtype and build (blockBackFast).
	blockBack bool
	// elemsPiece, if not 0, is the fewest elements an elementwise op gives
	// a goroutine instead of elemsPiece.
	elemsPiece int
	// groupInputs, if not 0, is the fewest input values per task of an
	// objective in task groups instead of groupInputs.
	groupInputs int
}

// or returns v, or def if v is 0.
func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
