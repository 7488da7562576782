package graph

import (
	"fmt"
	"os"
	"strings"
)

// BLASNote warns, in one sentence, when OPENBLAS_CORETYPE makes OpenBLAS
// run kernels for an older instruction set than the CPU has, or when
// OpenBLAS fell back to its SSE kernels on an AVX-512 CPU it does not
// know, and is empty otherwise (also without OpenBLAS, or when either side is unknown). Some
// machine images set OPENBLAS_CORETYPE=Haswell: on an AVX-512 CPU that
// halves the matrix products' speed (on AMD Zen 5, single-core GEMM 101
// against 188 GFLOP/s; docs/getting-started.md), which a run would
// otherwise show only in its timings (single-core GEMM with OpenBLAS's SSE
// kernels on the same CPU: 31-37 GFLOP/s).
func BLASNote() string {
	_, flags := cpuInfo("/proc/cpuinfo")
	return blasNote(os.Getenv("OPENBLAS_CORETYPE"), BLASCore(), cpuLevel(flags))
}

// The instruction-set levels of blasNote: what a CPU has and what
// OpenBLAS's kernels use.
var levelNames = []string{"SSE", "AVX", "AVX2", "AVX-512"}

// blasNote is BLASNote for the forced core type, the kernels OpenBLAS
// runs (openblas_get_corename) and the CPU's level (-1 unknown). Only
// kernels that the variable named are its doing: OpenBLAS ignores names
// it does not know, and a build without its DYNAMIC_ARCH cannot switch.
func blasNote(forced, core string, cpu int) string {
	k := coreLevel(core)
	if forced == "" && k == 0 && cpu == 3 {
		// OpenBLAS 0.3.21 does not know some AVX-512 CPUs (Intel's
		// Emerald Rapids, model 207) and runs its SSE3 kernels there, at a
		// twentieth of the CPU's GEMM speed (cnnbench -gemm: 7 against
		// 140 GFLOP/s with OPENBLAS_CORETYPE=Cooperlake).
		return fmt.Sprintf("OpenBLAS does not know this CPU and runs its SSE kernels (%s), at a tenth or less of its speed; "+
			"set OPENBLAS_CORETYPE=SkylakeX (or Cooperlake, with AVX-512 BF16) to have it run its AVX-512 ones", core)
	}
	if !strings.EqualFold(forced, core) || k < 0 || cpu < 0 || k >= cpu {
		return ""
	}
	slower := "about half"
	if cpu-k > 1 {
		slower = "a third or less of"
	}
	return fmt.Sprintf("OPENBLAS_CORETYPE=%s makes OpenBLAS run its %s kernels (%s) on a CPU with %s, "+
		"so the matrix products run at %s this CPU's speed; unset it (env -u OPENBLAS_CORETYPE) unless that is what you want to measure",
		forced, levelNames[k], core, levelNames[cpu], slower)
}

// cpuLevel is the instruction-set level of a CPU with these
// /proc/cpuinfo flags, -1 without them.
func cpuLevel(flags map[string]bool) int {
	switch {
	case flags == nil:
		return -1
	case flags["avx512f"]:
		return 3
	case flags["avx2"] && flags["fma"]:
		return 2
	case flags["avx"]:
		return 1
	}
	return 0
}

// coreLevel is the instruction-set level of OpenBLAS's x86-64 kernels of
// this name (openblas_get_corename), -1 for names it does not list.
func coreLevel(core string) int {
	switch strings.ToLower(core) {
	case "skylakex", "cooperlake", "sapphirerapids":
		return 3
	case "haswell", "zen", "excavator":
		return 2
	case "sandybridge", "bulldozer", "piledriver", "steamroller":
		return 1
	case "katmai", "coppermine", "northwood", "prescott", "banias", "core2", "penryn", "dunnington",
		"nehalem", "atom", "athlon", "opteron", "opteron_sse3", "barcelona", "bobcat", "nano":
		return 0
	}
	return -1
}
