//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process returns the user plus system time of all the process's threads
// so far, or false when getrusage fails.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
