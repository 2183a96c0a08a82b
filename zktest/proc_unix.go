//go:build unix && !linux

package zktest

import (
	"time"
)

// waitStopped is a no-op where /proc is not available.
func waitStopped(pid int, timeout time.Duration) {}
