//go:build goamd64.v3

package vec

// plainFuses: GOAMD64=v3 lets the compiler fuse x*y + z into one rounding.
const plainFuses = true
