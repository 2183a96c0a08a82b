package zklock_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zklock/lockertest"
	"github.com/zklockkit/zklockkit/zktest"
)

// The Locker conformance suite, which a third party's Driver passes
// through NewLocker, on the ZooKeeper Client (two sessions, as two
// processes) and on the MemoryLocker.
func TestIntegration_LockerConformance(t *testing.T) {
	t.Run("Client", func(t *testing.T) {
		var op *zklock.Client
		lockertest.Run(t, func(t *testing.T) (zklock.Locker, zklock.Locker) {
			root := zktest.UniqueRoot(t)
			op = newClient(t, root)
			return newClient(t, root), newClient(t, root)
		}, lockertest.Modes(), lockertest.Semaphore(), lockertest.Lose(func(t *testing.T, l *zklock.Lease) {
			if err := op.Conn().Delete(l.Path(), -1); err != nil {
				t.Fatal(err)
			}
		}))
	})
	t.Run("MemoryLocker", func(t *testing.T) {
		var m *zklock.MemoryLocker
		lockertest.Run(t, func(t *testing.T) (zklock.Locker, zklock.Locker) {
			m = zklock.NewMemoryLocker()
			return m, m
		}, lockertest.Modes(), lockertest.Semaphore(), lockertest.Lose(func(t *testing.T, l *zklock.Lease) {
			m.LoseResource(l.Resource())
		}))
	})
}
