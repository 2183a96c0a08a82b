// Package fence makes a database refuse the writes of a lock holder that
// has lost its lock: a database/sql fence for zklock's fencing tokens.
//
// A ZooKeeper lock cannot stop a holder that was paused (a GC pause, a
// frozen VM, SIGSTOP) past its session timeout: the lock goes to the next
// holder, and the paused one, when it resumes, still believes it holds it
// and writes. Every lease has a token (zklock.Lease.Token, its node's
// czxid) that grows with every lease the ensemble grants. A fence is a
// table that keeps, per resource, the largest token that has written, and
// refuses smaller ones: the late write fails instead of overwriting the
// next holder's.
//
// # Use
//
//	f, err := fence.Install(ctx, db) // once: creates zklock_fence if needed
//	...
//	tx, err := db.BeginTx(ctx, nil)
//	if err := f.Guard(ctx, tx, lease); err != nil { // first in the transaction
//		return err // errors.Is(err, fence.ErrStaleToken): a later lease has written
//	}
//	... the transaction's own reads and writes ...
//	return tx.Commit()
//
// Guard is one statement: an upsert of (resource, token) whose WHERE
// refuses a smaller stored token. It commits or rolls back with the
// transaction. An equal token passes (the same lease writing twice).
// Code run by an adapter (the Echo and net/http middleware, the gRPC
// interceptors, generated wrappers) calls GuardFromContext, which takes the
// lease from the context. Users bring their database/sql driver: the
// package imports none. Dialects: PostgreSQL and SQLite ([Postgres],
// [SQLite]), detected by Install or given with [WithDialect].
//
// # The key
//
// The fence keys its rows by the lease's resource name
// (zklock.Lease.Resource): "accounts/42", as the application and its
// resource templates spell it; for a lease taken with zklock.RawPath, its
// queue's znode path. Every adapter acquires by that name, so a lease from
// the middleware, an interceptor, generated code or a direct Acquire
// fences the same row, and so does a token carried from another process.
// Tokens are comparable only within one ZooKeeper ensemble: one fence
// table per ensemble. Do not fence one lock queue under two names (a raw
// path and the resource name that maps to it).
//
// # Isolation
//
// Call Guard before the transaction reads what it will write. From the
// moment Guard returns, the transaction holds the fence row's lock until
// it ends: another holder's Guard on the resource waits for it, and then
// sees its token.
//
// PostgreSQL, READ COMMITTED (its default): correct. The upsert takes the
// row lock (also when it refuses: ON CONFLICT DO UPDATE locks the
// conflicting row), waits for a concurrent writer of the row, and checks
// the token against the latest committed version. Every statement after it
// takes a fresh snapshot, so it sees the writes of every transaction that
// guarded with a smaller token before. REPEATABLE READ and SERIALIZABLE are
// correct too; there a Guard that meets a row changed after the
// transaction's snapshot fails with a serialization error (SQLSTATE 40001):
// roll back and retry.
//
// SQLite: correct at its only isolation level (serializable). Guard is a
// write, so it takes the database's write lock, which the transaction
// keeps until it ends; a concurrent writer waits (set a busy timeout, e.g.
// "_pragma=busy_timeout(5000)" with modernc.org/sqlite) and then sees the
// new token. A transaction that read before its Guard may get SQLITE_BUSY
// instead (its snapshot is stale): another reason to guard first, or to
// begin transactions IMMEDIATE.
//
// A holder paused after its Guard, inside its transaction, keeps the row
// locked: the next holder's Guard waits until the paused transaction ends,
// and then proceeds (the paused transaction guarded first, so it was
// allowed to commit). Bound that wait with the context's deadline and the
// database's own limits (PostgreSQL's lock_timeout and
// idle_in_transaction_session_timeout).
//
// # Which leases
//
// A token orders exclusive holders: exclusive, write and election leases
// can be fenced, and multi-resource leases resource by resource (Guard
// checks each part's own token, Lease.Parts: a lease's Token is the
// largest of its nodes', which is not the token of each resource). Read
// and semaphore leases are refused with ErrUnfenceable (several hold at
// once, so a larger token does not mean a later holder). Guard does not ask
// whether the lease is still held: the database decides, which is what
// refuses a holder that cannot know it was overtaken. To stop early, run
// the work under lease.Context.
//
// # Between processes
//
// A service that calls another while it holds a lock can send its token:
// [Transport] adds the token of the lease in a request's context as the
// [Header] ("Zklock-Fence-Token: 4294967302 accounts%2F42"), package
// fencegrpc does the same as gRPC metadata, and the callee guards its own
// transaction with it ([FromRequest], [Fence.GuardRequest],
// fencegrpc.FromIncoming). A carried token proves that its sender held a
// lease on that resource, granted after every lease with a smaller token.
// It does not prove that the sender still holds it (the fence is what
// makes that harmless), nor who sent it: anyone can write a header, so
// accept tokens only from authenticated peers.
//
// # Without a transaction
//
// [ExecConditional] runs one UPDATE that fences its own row: the row keeps
// its last writer's token in a column and the WHERE clause refuses smaller
// ones.
//
// docs/fence.md in the repository is the full manual, with the cost of a
// Guard per transaction.
package fence
