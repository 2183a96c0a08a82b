package zklock_test

import (
	"syscall"
	"time"
	"unsafe"
)

// zkClock returns the time on the clock ZooKeeper's session tracker reads
// (Java's System.nanoTime, CLOCK_MONOTONIC on Linux), so that a test can
// pick where in a tick an event falls. ok is false where that clock is
// not known.
func zkClock() (now time.Duration, ok bool) {
	var ts syscall.Timespec
	const clockMonotonic = 1
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
