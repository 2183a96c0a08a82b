//go:build !zklock_canary

package canary

// Built reports whether this build carries the canaries (the tag
// zklock_canary). It is false: every canary is off.
const Built = false

// On reports whether canary n is on. Without the tag zklock_canary it is
// always false, whatever the environment says, and the compiler drops
// the branches it guards.
func On(Name) bool { return false }
