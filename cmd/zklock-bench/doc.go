// Command zklock-bench compares zklock with go-zookeeper's own zk.Lock and
// with the raw create+delete rate of the ZooKeeper server, side by side in
// one process against one server or ensemble, and prints a table of
// medians, ratios, latencies, targets and verdicts; with them the client's
// CPU time per operation, its write system calls per request, and each
// side's contended hand-off against the floor that raw go-zookeeper calls
// reach.
//
// Usage:
//
//	go run ./cmd/zklock-bench [-rounds 5] [-quick] [-ensemble] [-json FILE] [-markdown] [-servers h:p,...] [-peers auto|required|off]
//	go run ./cmd/zklock-bench -from FILE [-markdown]
//
// Without -servers (or $ZKLOCK_SERVERS) it starts its own ZooKeeper with
// zktest (tickTime 2s, ZooKeeper's default forceSync=yes; -force-sync=false
// turns fsync off) and stops it at the end. With -ensemble it starts a
// 3-node ensemble on loopback instead, and every session of a run connects
// to one of the two followers, in turn (as most clients of an ensemble do:
// their writes go through the leader), so that both sides' sessions sit on
// the same servers. With an external ensemble (-servers h1,h2,h3) each
// session picks a server at random, as go-zookeeper does; the four-letter
// words srvr and mntr are used when allowed and approximated
// otherwise.
//
// -markdown prints the tables as markdown instead of plain text:
// docs/benchmarks.md is pasted from it. -from FILE runs nothing and prints
// the report that -json FILE saved, so that a page can be rendered again
// from the run it quotes.
//
// -memprofile PREFIX samples every allocation and writes heap profiles of
// the last round's memory measurement: PREFIX-<side>-before.pprof (the
// idle session) and PREFIX-<side>.pprof (every waiter queued); compare
// them with
//
//	go tool pprof -sample_index=inuse_space -diff_base PREFIX-zklock-before.pprof PREFIX-zklock.pprof
//
// -cpuprofile PREFIX writes a CPU profile of this process during the last
// round's enqueue of the waiters, PREFIX-<side>-enqueue.pprof (the server's
// share of the machine is not in it).
//
// With -peers (the default, auto) it also measures Apache Curator's
// InterProcessMutex and kazoo's Lock, each in a process of its own, on the
// uncontended, contenders and queue scenarios, and prints zklock's ratio
// to each. A peer that is not installed is skipped, and the table says so
// with the install command; -peers=required fails the run instead, and
// -peers=off leaves them out.
//
// The scenarios, the way sides alternate and what each latency means are
// described in package cmd/zklock-bench/internal/bench. The exit status is 2 when the run
// itself failed, 1 with -strict when a target was missed, and 0 otherwise.
package main
