package chaos_test

import (
	"os"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// TestMain lets the campaign re-execute this test binary as its workers.
func TestMain(m *testing.M) {
	chaos.RunWorkerIfChild()
	os.Exit(m.Run())
}
