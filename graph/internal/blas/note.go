// Package blas routes the large matrix products of the graphs to a BLAS:
// gonum's pure Go one, or OpenBLAS with -tags openblas; it names the one in
// use and warns when OpenBLAS runs kernels below the CPU's level.
package blas

import (
	"fmt"
	"os"
	"strings"

	"github.com/trmaml/trmaml/graph/internal/cpu"
)

// Note warns, in one sentence, when OPENBLAS_CORETYPE makes OpenBLAS
// run kernels for an older instruction set than the CPU has, or when
// OpenBLAS fell back to its SSE kernels on an AVX-512 CPU it does not
// know, and is empty otherwise (also without OpenBLAS, or when either side is unknown). Some
// machine images set OPENBLAS_CORETYPE=Haswell: on an AVX-512 CPU that
// halves the matrix products' speed (on AMD Zen 5, single-core GEMM 101
// against 188 GFLOP/s; docs/getting-started.md), which a run would
// otherwise show only in its timings (single-core GEMM with OpenBLAS's SSE
// kernels on the same CPU: 31-37 GFLOP/s).
func Note() string {
	_, flags := cpu.Info("/proc/cpuinfo")
	return note(os.Getenv("OPENBLAS_CORETYPE"), Core(), cpu.Level(flags))
}

// note is Note for the forced core type, the kernels OpenBLAS
// runs (openblas_get_corename) and the CPU's level (cpu.Level, -1 unknown). Only
// kernels that the variable named are its doing: OpenBLAS ignores names
// it does not know, and a build without its DYNAMIC_ARCH cannot switch.
func note(forced, core string, level int) string {
	k := coreLevel(core)
	if forced == "" && k == cpu.SSE && level == cpu.AVX512 {
		// OpenBLAS 0.3.21 does not know some AVX-512 CPUs (Intel's
		// Emerald Rapids, model 207) and runs its SSE3 kernels there, at a
		// twentieth of the CPU's GEMM speed (cnnbench -gemm: 7 against
		// 140 GFLOP/s with OPENBLAS_CORETYPE=Cooperlake).
		return fmt.Sprintf("OpenBLAS does not know this CPU and runs its SSE kernels (%s), at a tenth or less of its speed; "+
			"set OPENBLAS_CORETYPE=SkylakeX (or Cooperlake, with AVX-512 BF16) to have it run its AVX-512 ones", core)
	}
	if !strings.EqualFold(forced, core) || k < 0 || level < 0 || k >= level {
		return ""
	}
	slower := "about half"
	if level-k > 1 {
		slower = "a third or less of"
	}
	return fmt.Sprintf("OPENBLAS_CORETYPE=%s makes OpenBLAS run its %s kernels (%s) on a CPU with %s, "+
		"so the matrix products run at %s this CPU's speed; unset it (env -u OPENBLAS_CORETYPE) unless that is what you want to measure",
		forced, cpu.LevelNames[k], core, cpu.LevelNames[level], slower)
}

// coreLevel is the instruction-set level of OpenBLAS's x86-64 kernels of
// this name (openblas_get_corename), -1 for names it does not list.
func coreLevel(core string) int {
	switch strings.ToLower(core) {
	case "skylakex", "cooperlake", "sapphirerapids":
		return cpu.AVX512
	case "haswell", "zen", "excavator":
		return cpu.AVX2
	case "sandybridge", "bulldozer", "piledriver", "steamroller":
		return cpu.AVX
	case "katmai", "coppermine", "northwood", "prescott", "banias", "core2", "penryn", "dunnington",
		"nehalem", "atom", "athlon", "opteron", "opteron_sse3", "barcelona", "bobcat", "nano":
		return cpu.SSE
	}
	return -1
}
