//go:build !unix

package memory

// mapMemory is unavailable here: pooled buffers stay on Go's heap.
func mapMemory(int) ([]byte, bool) { return nil, false }

func unmapMemory([]byte) {}
