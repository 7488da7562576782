//go:build goexperiment.simd && amd64

package vec

import (
	"regexp"
	"strings"
	"testing"
)

// TestAVXSetIsAVX disassembles the AVX set's compiled kernels, and every
// function of this package or archsimd they call, with GNU objdump and
// fails on any instruction a CPU with AVX alone lacks (AVX2, FMA or
// AVX-512) and on any 256-bit register in Go code, whose upper half the
// runtime does not save at an asynchronous preemption on such a CPU
// (assembly functions are not preempted). Running the tests
// under QEMU's Sandy Bridge model (as CI does) stops at most such
// instructions but not all of them (it runs VBROADCASTSS from a register,
// an AVX2 form), so the code is read instruction by instruction as well.
func TestAVXSetIsAVX(t *testing.T) {
	if len(avxSet) == 0 {
		t.Skip("no AVX set on this CPU")
	}
	readSet(t, avxSet[0], "AVX|SSE", notAVX, momentsColumnAVX, dotColumnAVX)
}

// notAVX names the extension an instruction needs beyond AVX, or the
// 256-bit register Go code may not hold, or is empty.
func notAVX(line string, asm bool) string {
	m := insn.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	bytes, op, args := m[1], m[2], m[3]
	switch {
	case evex.MatchString(bytes+" ") || strings.Contains(args, "%zmm") || opmask.MatchString(args):
		return "AVX-512"
	case fma.MatchString(op):
		return "FMA"
	case avx2Only.MatchString(op):
		return "AVX2"
	case (op == "vbroadcastss" || op == "vbroadcastsd") && strings.HasPrefix(args, "%xmm"):
		return "AVX2 (broadcast from a register)"
	case strings.HasPrefix(op, "vp") && strings.Contains(args, "%ymm") &&
		op != "vptest" && op != "vpermilps" && op != "vpermilpd" && op != "vperm2f128":
		return "AVX2 (256-bit integer operation)"
	case !asm && strings.Contains(args, "%ymm"):
		return "a 256-bit register in Go code (not saved at preemption without AVX2)"
	}
	return ""
}

var (
	// avx2Only are the AVX2 instructions that are not 256-bit integer
	// arithmetic ("vp" with ymm operands), which notAVX finds by its form.
	avx2Only = regexp.MustCompile(`^(vpbroadcast|vbroadcasti128|vinserti128|vextracti128|vperm2i128|vpermd|vpermq|vpermps|vpermpd|vpblendd|vpmaskmov|vpsllv|vpsrlv|vpsrav|vgather|vpgather)`)
	fma      = regexp.MustCompile(`^vf(n)?m(add|sub)`)
	opmask   = regexp.MustCompile(`%k[0-7]`)
)
