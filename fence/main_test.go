package fence_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/zklockkit/zklockkit/internal/pgtest"
	"github.com/zklockkit/zklockkit/zktest"
)

// The package's tests run against a real ZooKeeper server and a real
// PostgreSQL cluster, both started here, and SQLite files in temporary
// directories. A short tick lets the paused-holder tests expire a session
// in about a second. Missing ZooKeeper or PostgreSQL fails the run with
// the command that installs it: nothing is skipped.
var (
	zkServer  *zktest.Server
	pgCluster *pgtest.Cluster
)

func TestMain(m *testing.M) {
	zktest.RunChild(childEnv, pausedHolder) // the paused-holder tests re-execute this binary
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if err = zktest.Installed(); err == nil {
		zkServer, err = zktest.StartServer(zktest.WithTickTime(200*time.Millisecond),
			zktest.WithSessionTimeoutBounds(400*time.Millisecond, 20*time.Second), zktest.WithForceSync(false))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer zkServer.Close()
	if pgCluster, err = pgtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pgCluster.Close()
	return m.Run()
}
