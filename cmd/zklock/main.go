// Command zklock answers "who holds the lock and who is waiting?" and runs
// a command while holding a lock, across hosts.
//
//	zklock ls [PREFIX]                  resources in use, holders, queue lengths
//	zklock show RESOURCE [--json]       holder and ordered waiters
//	zklock watch RESOURCE [--json]      live view of the queue
//	zklock run RESOURCE [--shared | --limit N] [--wait 30s | --try] [-E N] -- CMD [ARGS...]
//	zklock break RESOURCE               delete a stuck lock's holder nodes (admin)
//	zklock completion bash|zsh|fish     shell completion
//	zklock --version
//
// It connects to $ZKLOCK_SERVERS (or --servers) and takes the connection
// flags of package zklock: --root, --session-timeout, --user/--password
// (digest), --tls-ca/--tls-cert/--tls-key. "zklock help" and
// "zklock COMMAND --help" print the manual, with the exit codes.
//
// Install it with:
//
//	go install github.com/zklockkit/zklockkit/cmd/zklock@latest
package main

import (
	"os"

	"github.com/zklockkit/zklockkit/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
