// Package cpu names the processor a process runs on, from Linux's
// /proc/cpuinfo: its model, its vector extensions and the instruction-set
// level that the BLAS kernels are compared against.
package cpu

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine names the CPU the process runs on: its model name and vector
// extensions as Linux reports them in /proc/cpuinfo (AVX2, FMA, AVX-512F,
// AMX), and the CPUs the process may use. Elsewhere it names only the
// architecture.
func Machine() string {
	model, flags := Info("/proc/cpuinfo")
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

// Info reads the first processor's model name and flags from a
// /proc/cpuinfo file; both are empty if it cannot.
func Info(path string) (model string, flags map[string]bool) {
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

// The instruction-set levels of Level, by name.
const (
	SSE = iota
	AVX
	AVX2
	AVX512
)

// LevelNames names the levels SSE to AVX512.
var LevelNames = []string{"SSE", "AVX", "AVX2", "AVX-512"}

// Level is the instruction-set level of a CPU with these /proc/cpuinfo
// flags (SSE to AVX512), -1 without them.
func Level(flags map[string]bool) int {
	switch {
	case flags == nil:
		return -1
	case flags["avx512f"]:
		return AVX512
	case flags["avx2"] && flags["fma"]:
		return AVX2
	case flags["avx"]:
		return AVX
	}
	return SSE
}
