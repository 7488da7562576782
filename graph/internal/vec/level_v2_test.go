//go:build amd64.v2 && !amd64.v3

package vec

const amd64Level = 2
