package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// StartServer runs a real ZooKeeper on a free loopback port, for a test, a
// demo or a benchmark; Close stops it and removes its data.
func ExampleStartServer() {
	srv, err := zktest.StartServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		log.Fatal(err) // zktest.ErrNotInstalled names the apt-get command
	}
	defer srv.Close()
	mode, _ := srv.Mode()
	fmt.Println("mode:", mode)

	ctx := context.Background()
	c, err := zklock.Connect(ctx, []string{srv.Addr()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(ctx, "jobs/nightly")
	fmt.Println("locked:", err == nil)
	l.Release(ctx)

	// A stopped server keeps its data and its port: Start brings it back.
	_ = srv.Stop()
	fmt.Println("running:", srv.Running())
	_ = srv.Start()
	fmt.Println("running:", srv.Running())
	// Output:
	// mode: standalone
	// locked: true
	// running: false
	// running: true
}

// A Proxy between a client and its server injects network faults. Here it
// goes silent: a try answers ErrUnavailable within its bound instead of
// waiting; once the proxy passes traffic again the try succeeds.
func ExampleNewProxy() {
	srv := zktest.Shared() // the package's server, started by zktest.Main
	p, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	c, err := zklock.Connect(ctx, []string{p.Addr()}, zklock.WithRoot("/example/proxy"), zklock.WithSessionTimeout(6*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	p.Blackhole(true)               // also: DropAll, RejectNew, SetDelay, LoseReply
	_, err = c.TryAcquire(ctx, "r") // answers within min(6s/3, 1s)
	fmt.Println("unavailable:", errors.Is(err, zklock.ErrUnavailable))

	p.Blackhole(false)
	l, err := c.Acquire(ctx, "r", zklock.MaxWait(10*time.Second))
	fmt.Println("after the fault:", err == nil)
	l.Release(ctx)
	// Output:
	// unavailable: true
	// after the fault: true
}

// StartEnsemble runs a 3-node quorum on loopback; ConnectString is what
// clients take. Killing the leader leaves a quorum that elects another.
func ExampleStartEnsemble() {
	e, err := zktest.StartEnsemble(3)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	_, i, _ := e.Leader()
	ctx := context.Background()
	c, err := zklock.Open(ctx, e.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_ = e.Servers[i].Kill() // the leader dies
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		log.Fatal(err)
	}
	_, j, _ := e.Leader()
	fmt.Println("new leader:", j != i)
	l, err := c.Acquire(ctx, "jobs/nightly", zklock.MaxWait(30*time.Second))
	fmt.Println("locked through the failover:", err == nil)
	l.Release(ctx)
	// Output:
	// new leader: true
	// locked through the failover: true
}
