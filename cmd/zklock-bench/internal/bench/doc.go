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
//   - acquire-all and release-all: one session, one goroutine per
//     resource (queue znodes made beforehand); all acquire at once and,
//     once every one holds, all release at once (HoldAll). acquire-all
//     clocks the first half, release-all the second, each in a run of its
//     own; latencies are each acquire or each release.
//   - lone-request: one session sends one request at a time (an exists),
//     nothing else in flight; latencies are round trips. zklock's go through
//     its own connection layer under go-zookeeper (Client.Conn), so this
//     tells whether that layer delays a request that has no company.
//
// Except in fresh, queue znodes are made before the clock starts, as each
// side would make them (containers for zklock), so runs measure the steady
// state. Runs use
// the caller's context, as a server handler would; zk.Lock takes none.
//
// The raw rates (a Create of an EPHEMERAL_SEQUENTIAL node then its Delete,
// serially and from 32 goroutines on one session) are the ceiling a lock
// cycle can approach, since each cycle writes the same two transactions.
// The hand-off floor (HandOffFloor) is the least a contended hand-off can
// cost: a committed delete, its notification and one listing, with raw
// go-zookeeper calls on two sessions; the report sets each side's
// ping-pong hand-off p50 against it, round by round.
//
// # The client's CPU time and system calls
//
// Every run also measures, over its clocked part only, this process's CPU
// time (user and system, getrusage) and its write system calls (syscw in
// /proc/self/io), and the requests the servers received from clients
// (mntr's zk_packets_received, read before and after). The report gives
// CPU time per operation, zklock's over zk.Lock's paired by round, and
// write system calls per request. The ZooKeeper servers and the peers are
// processes of their own, so the CPU is the client's alone. When the
// servers run on this machine (the processes listening on their
// addresses, found through /proc), their CPU time in the same clocked
// part is read too (utime and stime in /proc/PID/stat, to the clock tick,
// 10 ms), and the report gives it per operation and, with the client's,
// zklock's total over zk.Lock's: on a machine whose cores the servers share
// with the client, what an operation costs it. Both sides run
// in this one process, one after the other: before each clocked part the
// process is made quiet (the goroutine count has settled, so the sessions
// of the run before, closed, have wound down, and a garbage collection has
// run), so that one side's leftovers are not billed to the other. A child
// process per side would isolate them further, but would measure a
// different binary state (its own warm-up, heap and scheduler) from the
// rest of the table. In ping-pong the CPU is read at each release call and
// when the other side holds, so that the harness's asking the servers
// between hand-offs whether the other side waits is left out; it has no
// request count. The write count is the whole process's: besides the
// sessions' sockets it includes the Go runtime's own wake-ups of its
// network poller (an 8-byte write to an eventfd, as perf trace -e write
// shows): many in a loop of lone requests, where the poller sleeps
// between them, few in a burst of acquires on one session.
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
// sides, with the same session timeout, on the same servers (pinned as
// the Go sides' are, with Config.PinSessions), outside the clock, and
// queues on a znode the bench made beforehand. The peers run
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
