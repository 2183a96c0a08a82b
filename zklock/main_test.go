package zklock_test

import (
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// Every test in this package talks to one real ZooKeeper server, started
// here; tests isolate themselves by root path (zktest.UniqueRoot). A short
// tick lets tests use session timeouts of a few seconds.
func TestMain(m *testing.M) {
	zktest.RunChild(flightChildEnv, flightHolder) // TestIntegration_FlightRecorderPausedHolder re-executes this binary
	zktest.Main(m, zktest.WithTickTime(500*time.Millisecond), zktest.WithSessionTimeoutBounds(time.Second, 20*time.Second))
}
