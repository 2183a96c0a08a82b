// Package zktest starts real Apache ZooKeeper 3.8 servers for tests, demos
// and benchmarks, and provides a TCP fault-injection proxy.
//
// ZooKeeper must be installed from Debian packages:
//
//	apt-get update && apt-get install -y zookeeper
//
// which puts the jars in /usr/share/java; java must be on PATH. Installed
// reports whether both are present.
//
// StartServer launches a standalone server on a free 127.0.0.1 port and
// StartEnsemble launches a loopback quorum. Each server is a separate JVM
// that can be stopped, killed, restarted, paused and resumed to simulate
// failures, and queried with four-letter words (FourLetter, Mode). Ports
// are taken below the kernel's ephemeral range, so that no other process's
// outgoing connection or port-0 listener takes a port while its server is
// stopped; Start checks that the server answering on the port is its own.
// Tree lists a subtree of znodes, to prove a test left nothing behind.
// Every JVM logs its safepoints to its server's directory; Stops reads
// them back, so a test can tell a server's garbage collection from a slow
// client. Each line of a server's log (server.log in its directory,
// unless WithLogOutput) starts with its time in LogTimeLayout.
//
// Proxy sits between a client and a server and can blackhole traffic, drop
// connections, refuse new ones or add latency. LoseReply reads ZooKeeper's
// framing to lose the reply to the next request of a given kind: the
// request is carried out and the client sees a connection loss, so a test
// can put "outcome unknown" exactly where it wants it.
//
// A package's tests can share one server:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		addr := zktest.Shared().Addr()
//		root := zktest.UniqueRoot(t)
//		...
//	}
//
// The package supports Linux (and other Unix systems); on Linux every JVM
// is killed automatically if the process that started it dies.
package zktest
