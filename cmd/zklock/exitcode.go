package main

import (
	"errors"
	"fmt"

	"github.com/zklockkit/zklockkit/zklock"
)

// Exit codes of the zklock command. A command run by "zklock run" exits
// with its own code, which is passed through; the codes below were chosen
// outside the ranges that shells (126, 127, 128+N), timeout(1) (124, 125)
// and sysexits.h (64–78) give a meaning, so a script can tell them apart
// from the usual ones.
const (
	// ExitOK: success (for run: CMD exited 0).
	ExitOK = 0
	// ExitError: any other failure, e.g. ZooKeeper refused an operation.
	ExitError = 1
	// ExitUsage: bad flags or arguments, unknown subcommand, no CMD for
	// run.
	ExitUsage = 2
	// ExitBusy: run --try found the lock held (or others queued ahead).
	// -E/--conflict-exit-code replaces it.
	ExitBusy = 111
	// ExitTimeout: run --wait passed before the lock was acquired.
	// -E/--conflict-exit-code replaces it.
	ExitTimeout = 112
	// ExitUnreachable: ZooKeeper is unavailable: no session could be
	// established within --connect-timeout (for run --try, within
	// TryBound of the session timeout; for run --wait D, within D if
	// shorter), or ZooKeeper did not answer a
	// try within that bound, or became unreachable while waiting.
	ExitUnreachable = 113
	// ExitLeaseLost: the lease was lost while CMD ran (its node was
	// deleted, the session expired or could no longer be proven alive);
	// CMD was sent SIGTERM, then SIGKILL after the grace period.
	ExitLeaseLost = 114
	// ExitCannotRun: CMD was found but could not be started (as in sh).
	ExitCannotRun = 126
	// ExitNotFound: CMD was not found (as in sh).
	ExitNotFound = 127
	// ExitSignalBase: CMD was killed by signal N, or zklock was
	// interrupted by signal N while waiting: the exit code is 128+N.
	ExitSignalBase = 128
)

// exitCodeTable is printed by "zklock help" and "zklock run --help".
const exitCodeTable = `Exit codes:
  0        success (run: CMD exited 0)
  1        other error (e.g. ZooKeeper refused the operation)
  2        usage error: bad flag or argument, unknown subcommand, run without CMD
  111      busy: --try and the lock is held by someone else (-E N: N instead)
  112      timeout: --wait passed before the lock was acquired (-E N: N instead)
  113      ZooKeeper unavailable: no session within --connect-timeout (run
           --wait D: within D, if shorter), or run --try got no answer
           within min(session timeout/3, 1s)
  114      lease lost while CMD ran; CMD was sent SIGTERM (SIGKILL after --grace)
  126      CMD could not be started; 127: CMD not found
  128+N    CMD was killed by signal N (or zklock was interrupted by N while waiting)
  other    CMD's own exit code
`

// exitError carries an exit code and a one-line message for stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode attaches an exit code to err.
func withCode(code int, err error) error { return &exitError{code, err} }

// usageErrorf reports bad input for subcommand cmd.
func usageErrorf(cmd, format string, a ...any) error {
	hint := "zklock help"
	if cmd != "" {
		hint = "zklock " + cmd + " --help"
	}
	return &exitError{ExitUsage, fmt.Errorf("%s (see '%s')", fmt.Sprintf(format, a...), hint)}
}

// codeOf maps an error to the exit code and reports it.
func codeOf(err error) int {
	var e *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e):
		return e.code
	case errors.Is(err, zklock.ErrLocked):
		return ExitBusy
	case errors.Is(err, zklock.ErrWaitTimeout):
		return ExitTimeout
	case errors.Is(err, zklock.ErrUnavailable):
		return ExitUnreachable
	case errors.Is(err, zklock.ErrLeaseLost):
		return ExitLeaseLost
	case errors.Is(err, zklock.ErrInvalidResource), errors.Is(err, zklock.ErrInvalidOption):
		return ExitUsage
	}
	return ExitError
}
