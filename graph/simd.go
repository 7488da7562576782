package graph

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/trmaml/trmaml/graph/internal/vec"
)

// SIMD reports whether the float32 elementwise loops (batch norm, pooling,
// ReLU, sums; package internal/vec) run on the full vector set: in a build
// with GOEXPERIMENT=simd on amd64, on a CPU with AVX2 and FMA (8 lanes) or
// AVX-512 (16 lanes, and the assembly kernels). Elsewhere on amd64 the
// heaviest of them run an SSE2 (or, with AVX alone, an AVX) set that
// computes the plain loops' values bit for bit (Engine names the set), and
// SIMD is false; other architectures run the plain loops. The fast build
// is
//
//	GOEXPERIMENT=simd go build -tags openblas ./cmd/trmaml
func SIMD() bool { return vec.SIMD() }

// Engine describes what runs this build's arithmetic, for timings that are
// read later: the machine (Machine), the BLAS and its kernels, and the
// elementwise loops. The same config runs at very different speeds on
// different CPUs and kernel sets, so a figure without them cannot be
// compared.
func Engine() string {
	loops := "plain Go loops"
	if isa := vec.ISA(); isa != "" {
		loops = "SIMD loops (" + isa + ")"
	}
	if core := BLASCore(); core != "" {
		return fmt.Sprintf("%s; BLAS %s (%s kernels), %s", Machine(), BLAS, core, loops)
	}
	return fmt.Sprintf("%s; BLAS %s, %s", Machine(), BLAS, loops)
}

// Machine names the CPU the process runs on: its model name and vector
// extensions as Linux reports them in /proc/cpuinfo (AVX2, FMA, AVX-512F,
// AMX), and the CPUs the process may use. Elsewhere it names only the
// architecture.
func Machine() string {
	model, flags := cpuInfo("/proc/cpuinfo")
	if model == "" {
		model = runtime.GOARCH + " CPU"
	}
	var ext []string
	for _, f := range []struct{ flag, name string }{{"avx2", "AVX2"}, {"fma", "FMA"}, {"avx512f", "AVX-512"}, {"amx_tile", "AMX"}} {
		if flags[f.flag] {
			ext = append(ext, f.name)
		}
	}
	if flags != nil && !flags["avx512f"] {
		ext = append(ext, "no AVX-512")
	}
	s := fmt.Sprintf("%s, %d CPUs", model, runtime.NumCPU())
	if len(ext) > 0 {
		s += " (" + strings.Join(ext, ", ") + ")"
	}
	return s
}

// cpuInfo reads the first processor's model name and flags from a
// /proc/cpuinfo file; both are empty if it cannot.
func cpuInfo(path string) (model string, flags map[string]bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && (model == "" || flags == nil) {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "model name":
			model = strings.TrimSpace(val)
		case "flags":
			flags = map[string]bool{}
			for _, fl := range strings.Fields(val) {
				flags[fl] = true
			}
		}
	}
	return model, flags
}
