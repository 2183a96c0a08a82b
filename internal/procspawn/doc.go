// Package procspawn starts the child processes that tests and the bench
// run (ZooKeeper servers, PostgreSQL clusters, the Curator and kazoo
// peers) so that they die with the process that started them.
//
// On Linux a child started with Pdeathsig gets that signal when the
// thread that started it dies, so a crashed or timed-out test binary
// leaves no JVM, postgres or Python behind. Go may end threads, so every
// child is started from one goroutine locked to its thread for the life of
// the process. Elsewhere Start only puts the child in a process group of
// its own.
package procspawn
