// Command zklock-bench compares zklock with go-zookeeper's own zk.Lock and
// with the raw create+delete rate of the ZooKeeper server, side by side in
// one process against one server, and prints a table of medians, ratios,
// latencies, targets and verdicts.
//
// Usage:
//
//	go run ./cmd/zklock-bench [-rounds 5] [-quick] [-json FILE] [-servers h:p,...] [-peers auto|required|off]
//
// Without -servers (or $ZKLOCK_SERVERS) it starts its own ZooKeeper with
// zktest (tickTime 2s, ZooKeeper's default forceSync=yes; -force-sync=false
// turns fsync off) and stops it at the end. With an external ensemble the
// four-letter words wchs, srvr and mntr are used when allowed and
// approximated otherwise.
//
// With -peers (the default, auto) it also measures Apache Curator's
// InterProcessMutex and kazoo's Lock, each in a process of its own, on the
// uncontended, contenders and queue scenarios, and prints zklock's ratio
// to each. A peer that is not installed is skipped, and the table says so
// with the install command; -peers=required fails the run instead, and
// -peers=off leaves them out.
//
// The scenarios, the way sides alternate and what each latency means are
// described in package internal/bench. The exit status is 2 when the run
// itself failed, 1 with -strict when a target was missed, and 0 otherwise.
package main
