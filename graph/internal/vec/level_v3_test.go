//go:build amd64.v3

package vec

const amd64Level = 3
