// Package typo has comments one edit away from a //zklock: directive. The
// library reports them as errors unless given WithWarnings; zklockgen
// prints them as warnings, and as errors with -strict.
package typo

import "context"

// Valid is locked.
//
//zklock:resource=valid
func Valid(ctx context.Context) error { return nil }

//zklok:resource=missing-c
func MissingC(ctx context.Context) error { return nil }

//zlock:resource=missing-k
func MissingK(ctx context.Context) error { return nil }

//zkloc:resource=missing-last-k try
func MissingLastK(ctx context.Context) error { return nil }

//zklcok:resource=swapped
func Swapped(ctx context.Context) error { return nil }

//zklocks:resource=extra-s
func ExtraS(ctx context.Context) error { return nil }

// zk-lock: wait=5s resource=hyphen
func Hyphen(ctx context.Context) error { return nil }

// Prose is not reported: zlock: and zklok: are not at the start of a
// line, and here
//
// zlock: the caller holds the lock.
// block:resource=x (two edits away)
func Prose(ctx context.Context) error { return nil }
