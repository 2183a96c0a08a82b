package middleware_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

// Every integration test in this package talks to one real ZooKeeper
// server, started here; tests isolate themselves by root path.
func TestMain(m *testing.M) { zktest.Main(m) }
