//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the user and system time of every thread of this
// process so far. On Linux their sum is exact to the microsecond: the
// kernel scales the tick-sampled split between the two to the scheduler's
// own runtime of the threads.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
