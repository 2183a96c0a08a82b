package zkecho_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

// Every test in this package talks to one real ZooKeeper server, started
// here; tests isolate themselves by root path (zktest.UniqueRoot).
func TestMain(m *testing.M) { zktest.Main(m) }
