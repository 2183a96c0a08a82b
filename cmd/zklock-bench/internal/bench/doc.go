// Package bench measures zklock against go-zookeeper's own zk.Lock and
// against the raw create+delete rate of the ZooKeeper server, side by side
// in one process and on one server or ensemble. It backs the zklock-bench command and
// the go test benchmarks of package zklock.
//
// # Scenarios
//
// Every scenario runs once per side per round, the sides alternating which
// goes first (A B, B A, ...) so that drift in a shared machine touches both
// alike; the report keeps the median of the rounds. Each run uses its own
// fresh root znode, removed afterwards.
//
//   - uncontended: one session acquires and releases one lock in a loop;
//     latencies are whole cycles.
//   - ping-pong: two sessions take one lock in turn; each holder keeps the
//     lock until the other is waiting (its node queued and its watch set),
//     so every acquire waits for a release. The figure is hand-offs per
//     second of hand-off time (release called until the other side holds),
//     the rate at which the lock changes hands when a waiter is ready; the
//     wall-clock rate, holds included, is reported beside it.
//   - contenders-N: N sessions each loop acquire/release on one lock;
//     latencies are acquire waits.
//   - queue: one holder, a deep queue of waiters on one more session; the
//     clock runs from the holder's release until every waiter has held and
//     released in turn; latencies are the gaps between acquisitions.
//   - distinct: one session, one goroutine per resource, every goroutine
//     acquires and releases its own lock at once; latencies are each
//     goroutine's acquire+release.
//   - fresh: distinct on resources never locked before (new names for
//     every batch), so each acquire makes its queue znode.
//
// Except in fresh, queue znodes are made before the clock starts, as each
// side would make them (containers for zklock), so runs measure the steady
// state. Runs use
// the caller's context, as a server handler would; zk.Lock takes none.
//
// The raw rates (a Create of an EPHEMERAL_SEQUENTIAL node then its Delete,
// serially and from 32 goroutines on one session) are the ceiling a lock
// cycle can approach, since each cycle writes the same two transactions.
//
// Memory per waiting lock (MeasureWaiters) is the growth of the live heap,
// after a garbage collection, between a connected idle client and the same
// client with n goroutines each queued behind another session on its own
// resource; goroutine stacks are counted apart, and the two together are
// compared with zk.Lock's, as is the time it took to queue them all.
//
// Sessions connect to every server given (go-zookeeper picks one), or, with
// Config.PinSessions, to the pinned servers in turn, the same for both
// sides.
//
// # Peers
//
// With Config.Peers, Run also measures the two recipes users compare a
// ZooKeeper lock with: Apache Curator's InterProcessMutex (Java, Debian's
// Curator 5.4) and kazoo's Lock (Python, Debian's kazoo 2.8), on the
// scenarios where the comparison is like for like: uncontended, every
// contenders-N and queue. Each peer is one long-lived process
// (testdata/peers: compiled with javac, or run by /usr/bin/python3) that
// runs a whole scenario when told to and prints its own count, clock and
// latency percentiles as a JSON line; it opens as many sessions as the Go
// sides, with the same session timeout, on the same server, outside the
// clock, and queues on a znode the bench made beforehand. The peers run
// in the same rounds as zklock and zk.Lock (zklock, zk.Lock, Curator,
// kazoo; the reverse every other round) after a warm-up that runs each
// scenario once (three times for Curator, so that the JVM has compiled
// its hot paths before the first measured round). The report gives zklock's rate over each peer's, with
// the ratios of the rounds, paired. A peer process that fails is replaced
// for the next run; every run is bounded by PeerRunTimeout.
//
// # Use
//
//	rep, err := bench.Run(ctx, bench.Config{Servers: []string{addr}, Rounds: 5})
//	if err != nil { ... }
//	rep.WriteTable(os.Stdout)
package bench
