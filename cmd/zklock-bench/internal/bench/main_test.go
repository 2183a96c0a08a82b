package bench_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

// The tests share one real ZooKeeper server.
func TestMain(m *testing.M) { zktest.Main(m) }
