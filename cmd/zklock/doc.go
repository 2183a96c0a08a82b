// Command zklock answers "who holds the lock and who is waiting?" and runs
// a command while holding a lock, across hosts.
//
// "zklock help" and "zklock COMMAND --help" print the manual, with the
// exit codes.
//
// Install it with:
//
//	go install github.com/zklockkit/zklockkit/cmd/zklock@latest
//
// # Commands
//
//	zklock ls [PREFIX]                  resources in use, with holders and queue length; --all, --json
//	zklock top [PREFIX]                 live view of the most contended resources across hosts; --once, --json
//	zklock show RESOURCE                holder and ordered waiters (owner, token, age); --json, --raw
//	zklock watch RESOURCE               live view: redraws on a terminal, one line per change when piped; --json
//	zklock run RESOURCE [--shared | --limit N] [--wait D | --try] [-E N] -- CMD [ARGS...]
//	zklock break RESOURCE               delete a stuck lock's holder nodes (as the admin identity)
//	zklock completion bash|zsh|fish     shell completion script
//	zklock --version
//
// Every command takes the connection flags (--servers, default
// $ZKLOCK_SERVERS; --root; --session-timeout; --connect-timeout; --user and
// --password for digest authentication; --tls, --tls-ca, --tls-cert,
// --tls-key, --tls-server-name), before or after its name, and --help.
// Flags of ls, top, show, watch and break may follow their arguments.
//
// # Exit codes
//
// Errors are one line on stderr and a non-zero exit code: ExitUsage for bad
// input, ExitUnreachable when ZooKeeper cannot be reached, and for run
// ExitBusy, ExitTimeout (both replaced by -E N, as flock's), ExitLeaseLost,
// or CMD's own code (128+N when it was killed by signal N). The codes
// 111–114 lie outside the ranges that shells, timeout(1) and sysexits.h use.
// "run --try" answers within TryBound of the session timeout, connecting
// included: while ZooKeeper is away it exits ExitUnreachable.
//
// # Run
//
// Run is a distributed flock(1): it holds the lock while CMD runs, passes
// the fencing token in ZKLOCK_TOKEN, forwards signals, and stops CMD
// (SIGTERM, then SIGKILL after --grace) as soon as the lease is lost, before
// ZooKeeper can grant the lock to anyone else (see package zklock's Safety
// section for what that guarantee rests on).
package main
