package codegen_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

// TestMain starts the ZooKeeper server that TestIntegration_GeneratedCode
// runs the generated code against.
func TestMain(m *testing.M) { zktest.Main(m) }
