// Command cnnbench runs meta-iterations of MAML's Omniglot CNN on random
// data and prints the time per iteration and the achieved GFLOP/s of its
// matrix products, so that peak memory can be measured on one configuration
// at a time:
//
//	GOEXPERIMENT=simd /usr/bin/time -v go run -tags openblas ./graph/internal/cnnbench -ways 5 -order second
//
// (go run's own memory is not counted: /usr/bin/time reports the largest
// process, the benchmark.) Without -tags openblas it uses gonum's pure-Go
// BLAS, without GOEXPERIMENT=simd the SSE set (graph/internal/vec) for the
// elementwise work.
package main
