// Command cnnbench runs meta-iterations of MAML's 4-block CNN on random
// data and prints the time per iteration and the achieved GFLOP/s of its
// matrix products, so that peak memory can be measured on one configuration
// at a time: the Omniglot shape by default, MAML's mini-ImageNet one with
// the PyTorch yardstick's flags,
//
//	GOEXPERIMENT=simd /usr/bin/time -v go run -tags openblas ./graph/internal/cnnbench -ways 5 -order second
//	... cnnbench -image 84 -channels 3 -filters 32 -steps 5 -query 15 -tasks 4 -bn adapt
//
// (go run's own memory is not counted: /usr/bin/time reports the largest
// process, the benchmark.) Without -tags openblas it uses gonum's pure-Go
// BLAS, without GOEXPERIMENT=simd the SSE set (graph/internal/vec) for the
// elementwise work.
package main
