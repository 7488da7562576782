//go:build !unix

package cputime

import "time"

// Process reports that processor time is not measured on this platform.
func Process() (time.Duration, bool) { return 0, false }
