package zklock

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock/internal/layout"
)

// A Mode converts to the layout's Kind of the same name: the recipe, the
// MemoryLocker and Inspect rely on the two enumerations lining up.
func TestModesAreLayoutKinds(t *testing.T) {
	for m, k := range map[Mode]layout.Kind{Exclusive: layout.Exclusive, Read: layout.Read, Write: layout.Write,
		Semaphore: layout.Semaphore, Election: layout.Election} {
		if layout.Kind(m) != k || Mode(k) != m {
			t.Errorf("Mode %v converts to Kind %d, want %d", m, layout.Kind(m), k)
		}
	}
}
