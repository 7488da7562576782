package vec

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSSESetIsSSE2 disassembles the SSE set's compiled kernels, and every
// function of this package they call, with GNU objdump and fails on any
// VEX or EVEX instruction (AVX and later) and on the SSE3 to SSE4.2
// instructions its doc promises not to use.
func TestSSESetIsSSE2(t *testing.T) {
	if len(sseSet) == 0 {
		t.Skip("no SSE set in this build")
	}
	readSet(t, sseSet[0], "SSE", notSSE2, momentsColumnSSE, dotColumnSSE)
}

// readSet disassembles the kernels of set that are not the plain loops'
// (their names must end in one of suffixes, separated by "|"), the
// functions they call through
// function values (indirect), and every function of this package or
// archsimd they call, and reports every instruction rule names.
func readSet(t *testing.T, set kernels, suffixes string, rule func(line string, asm bool) string, indirect ...any) {
	if amd64Level > 1 {
		t.Skipf("built for GOAMD64=v%d: the compiler may use instructions after SSE2 in any Go code", amd64Level)
	}
	t.Helper()
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		t.Skip("GNU objdump not installed (apt-get install binutils)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var todo []uintptr
	kv, plainSet := reflect.ValueOf(set), reflect.ValueOf(plain)
	for i := range kv.NumField() {
		if pc := kv.Field(i).Pointer(); pc != plainSet.Field(i).Pointer() {
			name := runtime.FuncForPC(pc).Name()
			if !slices.ContainsFunc(strings.Split(suffixes, "|"), func(s string) bool { return strings.HasSuffix(name, s) }) {
				t.Errorf("kernel %s of the %s set is %s", kv.Type().Field(i).Name, suffixes, name)
			}
			todo = append(todo, pc)
		}
	}
	if len(todo) == 0 {
		t.Fatalf("the %s set is the plain loops", suffixes)
	}
	for _, f := range indirect {
		todo = append(todo, reflect.ValueOf(f).Pointer())
	}
	seen := map[uintptr]bool{}
	for len(todo) > 0 {
		fn := runtime.FuncForPC(todo[0])
		todo = todo[1:]
		start := fn.Entry()
		if seen[start] {
			continue
		}
		seen[start] = true
		// Assembly is not preempted: 256-bit values are safe there.
		file, _ := fn.FileLine(start)
		asm := strings.HasSuffix(file, ".s")
		// The function's code ends where the runtime's table names another.
		end := start + 1
		for f := runtime.FuncForPC(end); f != nil && f.Entry() == start; f = runtime.FuncForPC(end) {
			end++
		}
		out, err := exec.Command(objdump, "-d", "--insn-width=16",
			fmt.Sprintf("--start-address=%#x", start), fmt.Sprintf("--stop-address=%#x", end), exe).Output()
		if err != nil {
			t.Fatalf("objdump %s: %v", fn.Name(), err)
		}
		read := 0
		for _, line := range strings.Split(string(out), "\n") {
			if insn.MatchString(line) {
				read++
			}
			if why := rule(line, asm); why != "" {
				t.Errorf("%s: %s: %s", fn.Name(), why, strings.TrimSpace(line))
			}
			if m := callee.FindStringSubmatch(line); m != nil {
				pc, _ := strconv.ParseUint(m[1], 16, 64)
				if name := runtime.FuncForPC(uintptr(pc)).Name(); strings.HasPrefix(name, vecPrefix) || strings.HasPrefix(name, "simd/archsimd.") {
					todo = append(todo, uintptr(pc))
				}
			}
		}
		// The runtime's addresses are the file's only in a binary that is
		// not position-independent; elsewhere objdump finds nothing there.
		if read < int(end-start)/16 {
			t.Fatalf("%s: %d instructions read in %d bytes at %#x (a position-independent test binary? build it with -buildmode=exe)", fn.Name(), read, end-start, start)
		}
	}
	t.Logf("read %d functions", len(seen))
}

const vecPrefix = "github.com/trmaml/trmaml/graph/internal/vec."

var (
	callee = regexp.MustCompile(`\tcall\s+(?:0x)?([0-9a-f]+)`) // with or without the symbol table
	// insn splits an objdump line into its bytes, mnemonic and operands.
	insn = regexp.MustCompile(`^\s*[0-9a-f]+:\t([0-9a-f]{2}(?: [0-9a-f]{2})*)\s*\t(\S+)\s*(.*)$`)
	// evex is an instruction's first byte 0x62, after any segment or
	// address-size prefix: the EVEX encoding, AVX-512 only (xmm and ymm
	// forms of AVX-512 instructions and registers 16-31 included).
	evex = regexp.MustCompile(`^(?:(?:2e|36|3e|26|64|65|67) )*62 `)
	// vex is an instruction's first byte 0xc4 or 0xc5 (LES and LDS are
	// invalid in 64-bit mode): the VEX encoding, AVX and later.
	vex = regexp.MustCompile(`^(?:(?:2e|36|3e|26|64|65|67) )*c[45] `)
	// afterSSE2 are the SSE3, SSSE3 and SSE4 instructions.
	afterSSE2 = regexp.MustCompile(`^(addsubp|hadd|hsub|movshdup|movsldup|movddup|lddqu|pshufb|phadd|phsub|pmaddubsw|pmulhrsw|palignr|psign|pabs|blendp|blendvp|pblend|dpp|insertps|extractps|pextr[bdq]|pinsr[bdq]|pmins[bd]|pmaxs[bd]|pminu[dw]|pmaxu[dw]|ptest|roundp|rounds|pmulld|pmuldq|pmovsx|pmovzx|packusdw|pcmpeqq|pcmpgtq|pcmp[ei]str|mpsadbw|phminposuw|movntdqa|crc32|popcnt)`)
)

// notSSE2 names the extension an instruction needs beyond SSE2, or is
// empty.
func notSSE2(line string, _ bool) string {
	m := insn.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	bytes, op := m[1]+" ", m[2]
	switch {
	case evex.MatchString(bytes):
		return "AVX-512"
	case vex.MatchString(bytes):
		return "AVX (a VEX encoding)"
	case afterSSE2.MatchString(op):
		return "SSE3 or later"
	}
	return ""
}
