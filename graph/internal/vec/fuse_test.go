//go:build !goamd64.v3

package vec

// plainFuses reports whether the compiler fuses the plain loops' multiplies
// and adds into one rounding (GOAMD64=v3 and up), where the AVX set rounds
// twice.
const plainFuses = false
