// Package lockertest is the conformance suite of a zklock.Locker: what
// every Locker must do, whatever holds the locks. zklock runs it against
// its ZooKeeper Client and its MemoryLocker; run it against a Driver of
// your own, made a Locker by zklock.NewLocker:
//
//	func TestMyDriver(t *testing.T) {
//		lockertest.Run(t, func(t *testing.T) (zklock.Locker, zklock.Locker) {
//			d := mydriver.New(...)
//			return zklock.NewLocker(d), zklock.NewLocker(d) // two clients
//		})
//	}
//
// The two Lockers stand for two processes contending for the same
// resources; they may be one Locker used twice. Each subtest takes fresh
// Lockers and its own resource names.
//
// # What it checks
//
// A lease's Err is nil while held, ErrReleased after Release, and it is
// released once (a second Release is ErrReleased); Done closes and
// Lease.Context is cancelled when it ends. A busy resource answers a try
// with ErrLocked, a MaxWait with ErrWaitTimeout, a cancelled wait with the
// context's error, and a released one goes to the waiter. Fencing tokens
// grow. An acquire under a lease's Context re-enters it. AcquireAll is all
// or nothing. A bad name is ErrInvalidResource, a name listed twice too,
// and Try with MaxWait is ErrInvalidOption. With Modes, readers share and
// writers exclude; with Semaphore, a limit holds; with both, leases of two
// modes on one resource exclude each other (but readers, and a semaphore's
// holders up to its limit), waiters included; with Lose, a lost lease says
// so.
package lockertest
