// Package zkenv names the environment variable that the examples, the
// CLI, the demo and the bench read their ZooKeeper connection string from.
// (Package zkstart starts a throwaway server when it is unset.)
package zkenv

import (
	"os"
	"strings"
)

// EnvServers is the environment variable that the examples, the CLI, the
// demo and the bench read the connection string from.
const EnvServers = "ZKLOCK_SERVERS"

// DefaultServers is the connection string used when EnvServers is unset.
const DefaultServers = "127.0.0.1:2181"

// Servers returns $ZKLOCK_SERVERS, or DefaultServers when it is unset.
func Servers() string {
	if s := strings.TrimSpace(os.Getenv(EnvServers)); s != "" {
		return s
	}
	return DefaultServers
}
