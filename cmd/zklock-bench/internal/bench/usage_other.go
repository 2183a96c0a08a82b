//go:build !unix

package bench

import "time"

// processCPU returns 0 where getrusage is missing: the report then has no
// CPU figures.
func processCPU() time.Duration { return 0 }
