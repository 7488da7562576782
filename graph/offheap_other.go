//go:build !unix

package graph

// mapMemory is unavailable here: pooled buffers stay on Go's heap.
func mapMemory(int) ([]byte, bool) { return nil, false }

func unmapMemory([]byte) {}
