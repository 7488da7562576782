//go:build unix

package memory

import "syscall"

// mapMemory returns size zeroed bytes mapped from the operating system,
// outside Go's heap, or false if the mapping fails.
func mapMemory(size int) ([]byte, bool) {
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return mem, err == nil
}

// unmapMemory returns memory from mapMemory to the operating system.
func unmapMemory(mem []byte) { syscall.Munmap(mem) }
