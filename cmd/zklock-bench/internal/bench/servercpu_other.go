//go:build !linux

package bench

import "time"

// serverPIDs returns nil where /proc is missing: the report then has no
// server CPU figures.
func serverPIDs([]string) []int { return nil }

func processCPUOf(int) time.Duration { return -1 }
