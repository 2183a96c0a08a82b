// Package zkstart gives the examples their ZooKeeper: the one named by
// ZKLOCK_SERVERS, or else a throwaway local server started with zktest.
package zkstart

import (
	"fmt"
	"io"
	"os"

	"github.com/zklockkit/zklockkit/internal/zkenv"
	"github.com/zklockkit/zklockkit/zktest"
)

// ServersOrStart returns the connection string from ZKLOCK_SERVERS, or
// starts a throwaway server (saying so on w) and returns its address and a
// function that stops it.
func ServersOrStart(w io.Writer) (dsn string, stop func(), err error) {
	if dsn := os.Getenv(zkenv.EnvServers); dsn != "" {
		return dsn, func() {}, nil
	}
	if err := zktest.Installed(); err != nil {
		return "", nil, fmt.Errorf("%s is not set and no ZooKeeper can be started here: %w", zkenv.EnvServers, err)
	}
	srv, err := zktest.StartServer(zktest.WithForceSync(false))
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(w, "started a throwaway ZooKeeper on %s (set %s to use your own)\n\n", srv.Addr(), zkenv.EnvServers)
	return srv.Addr(), func() { _ = srv.Close() }, nil
}
