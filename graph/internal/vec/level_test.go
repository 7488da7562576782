//go:build !amd64.v2

package vec

// amd64Level is the GOAMD64 level the tests were built for (1 on other
// architectures): from v2 the compiler may use instructions after SSE2 in
// Go code, from v3 it fuses x*y + z into one rounding (plainFuses), where
// the AVX and SSE sets round twice.
const amd64Level = 1
