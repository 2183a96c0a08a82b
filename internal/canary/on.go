//go:build zklock_canary

package canary

import (
	"fmt"
	"os"
	"sync"
)

// Built reports whether this build carries the canaries (the tag
// zklock_canary): it does.
const Built = true

// active is the canary the environment names, read once; "" for none.
var active = sync.OnceValue(func() Name {
	n := Name(os.Getenv(EnvVar))
	if n != "" && !Known(n) {
		// A misspelt canary would be off, and would survive its check
		// for the wrong reason.
		fmt.Fprintf(os.Stderr, "canary: %s=%q names no canary; known: %v\n", EnvVar, n, All)
		os.Exit(2)
	}
	return n
})

// On reports whether canary n is on: whether ZKLOCK_CANARY names it.
func On(n Name) bool { return active() == n }
