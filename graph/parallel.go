package graph

import "sync"

// How an op spreads its work over goroutines: its tasks (parallelTasks),
// the chunks of a task where there are fewer tasks than goroutines
// (splitTasks), or the elements of an elementwise op (parallelElems). The
// values never depend on the number of goroutines.

// parallel reports whether parallelTasks would use several goroutines.
func parallel(n, work int) bool {
	return largeTasks(n, work) && workers() > 1
}

// largeTasks reports whether n tasks of work scalar operations each are
// large enough for a goroutine per task. Ops that choose between two ways
// of computing a value, which round differently, choose by it, never by
// parallel: their results must not depend on GOMAXPROCS.
func largeTasks(n, work int) bool {
	return n > 1 && work >= 1<<15
}

// elemLoop is an elementwise op's loop over the elements [lo, hi) of its
// output and inputs, k its scalar (if it has one).
type elemLoop[T float] func(out []T, in [][]T, lo, hi int, k T)

// callElems runs the float64 or the float32 instance of an elementwise
// op's loop over a (parallelElems). The op's forward method passes both
// instances: named there, outside generic code, they are static functions,
// while a generic function naming its own instance of a loop builds a
// closure (its dictionary) at every call, an allocation per op and step
// (measured), and the sine MLP's steps run thousands of these ops.
func callElems(a *args, k float64, f64 elemLoop[float64], f32 elemLoop[float32]) {
	if a.o32 != nil {
		parallelElems(a.o32, a.i32, float32(k), f32, a.piece)
		return
	}
	parallelElems(a.o64, a.i64, k, f64, a.piece)
}

// parallelElems runs f over pieces of out's elements that cover them, on
// up to workers() goroutines when there are many (from elemsPiece elements
// per piece, or piece if not 0), else over all of them on the calling
// goroutine. It is for the elementwise ops over all tasks at once (ReLU and its mask, scaling, the
// sums of gradient terms), whose values do not depend on the pieces. On
// one goroutine they took 6% of a 5-way meta-iteration's CPU on 2 cores
// while the other core waited; they are bound by memory bandwidth, so 2
// cores gain little (docs/performance.md), but they would bound the
// speed-up on 8 or 16.
func parallelElems[T float](out []T, in [][]T, k T, f elemLoop[T], piece int) {
	n := len(out)
	pieces := min(workers(), n/or(piece, elemsPiece))
	if pieces < 2 {
		f(out, in, 0, n, k)
		return
	}
	size := (n/pieces + 63) &^ 63 // whole cache lines
	var wg sync.WaitGroup
	for lo := size; lo < n; lo += size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(out, in, lo, min(lo+size, n), k)
		}()
	}
	f(out, in, 0, min(size, n), k)
	wg.Wait()
}

// elemsPiece is the fewest elements that parallelElems gives a goroutine
// (tuning.elemsPiece overrides it).
const elemsPiece = 1 << 15

// splitTasks reports whether an op of n tasks should split the work of a
// task over several goroutines as well (where it can, with the same
// values): with fewer tasks than goroutines, a task each would leave
// cores idle (meta-batch 1 or 2 on 2 cores or more).
func splitTasks(n int) bool { return n < workers() }

// parallelTasks runs f(t) for t = 0..n-1, over several goroutines when each
// call does at least work scalar operations' worth of a large tensor (the CNN's
// activations), on the calling goroutine for the small ones of the MLP.
func parallelTasks(n, work int, f func(t int)) {
	procs := workers()
	if !parallel(n, work) {
		for t := 0; t < n; t++ {
			f(t)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for t := 0; t < n; t++ {
		next <- t
	}
	close(next)
	for w := 0; w < min(procs, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				f(t)
			}
		}()
	}
	wg.Wait()
}
