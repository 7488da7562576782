//go:build !unix

package run

import "time"

// processCPU reports that processor time is not measured on this platform.
func processCPU() (time.Duration, bool) { return 0, false }
