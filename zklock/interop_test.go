package zklock_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Interoperability with the locks other services in a shop already use:
// Apache Curator (Java) and kazoo (Python), run as real processes against
// the same server. Missing peers fail the test with the install command.

const peersInstall = "apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java python3-kazoo"

var curatorJars = []string{
	"/usr/share/java/curator-framework.jar", "/usr/share/java/curator-recipes.jar",
	"/usr/share/java/curator-client.jar", "/usr/share/java/zookeeper.jar",
	"/usr/share/java/guava.jar", "/usr/share/java/slf4j-nop.jar",
}

// peer is a Curator or kazoo process holding (or waiting for) a lock.
type peer struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startCurator(t *testing.T, path, mode string, extra ...string) *peer {
	t.Helper()
	for _, j := range curatorJars {
		if _, err := os.Stat(j); err != nil {
			t.Fatalf("Apache Curator is not installed (%s missing): %s", j, peersInstall)
		}
	}
	if _, err := exec.LookPath("javac"); err != nil {
		t.Fatalf("javac is not installed: apt-get install -y default-jdk-headless")
	}
	dir := t.TempDir()
	cp := strings.Join(curatorJars, ":")
	if out, err := exec.Command("javac", "-d", dir, "-cp", cp, "testdata/interop/CuratorPeer.java").CombinedOutput(); err != nil {
		t.Fatalf("javac CuratorPeer: %v\n%s", err, out)
	}
	return startPeer(t, "curator-"+mode, append([]string{"java", "-cp", dir + ":" + cp, "CuratorPeer", zktest.Shared().Addr(), path, mode}, extra...)...)
}

func startKazoo(t *testing.T, path, mode string, extra ...string) *peer {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import kazoo").Run(); err != nil {
		t.Fatalf("kazoo is not installed for /usr/bin/python3: %s", peersInstall)
	}
	script, _ := filepath.Abs("testdata/interop/kazoo_peer.py")
	return startPeer(t, "kazoo-"+mode, append([]string{"/usr/bin/python3", script, zktest.Shared().Addr(), path, mode}, extra...)...)
}

func startPeer(t *testing.T, name string, argv ...string) *peer {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &peer{t: t, name: name, cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	p.expect("READY", 60*time.Second)
	return p
}

// expect waits for a line starting with word.
func (p *peer) expect(word string, within time.Duration) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("%s exited before %s", p.name, word)
		}
		if !strings.HasPrefix(l, word) {
			p.t.Fatalf("%s said %q, want %s", p.name, l, word)
		}
	case <-time.After(within):
		p.t.Fatalf("%s did not say %s within %v", p.name, word, within)
	}
}

// quiet asserts the peer says nothing (does not acquire) for a while.
func (p *peer) quiet(d time.Duration) {
	p.t.Helper()
	select {
	case l := <-p.lines:
		p.t.Fatalf("%s said %q while it should be waiting", p.name, l)
	case <-time.After(d):
	}
}

func (p *peer) release() {
	p.t.Helper()
	io.WriteString(p.stdin, "release\n")
	p.expect("RELEASED", 30*time.Second)
}

// waitNodes waits until the queue at path has n nodes.
func waitNodes(t *testing.T, c *zklock.Client, path string, n int) {
	t.Helper()
	eventually(t, "queue length", func() bool {
		q, err := c.Inspect(context.Background(), path, zklock.RawPath())
		return err == nil && len(q.Nodes) == n
	})
}

func TestIntegration_InteropCuratorMutex(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	path := root + "/locks/report"
	a, b := newClient(t, root), newClient(t, root)

	// zklock holds; Curator queues behind it; a second zklock client queues
	// behind Curator. The order is kept across the two libraries.
	held, err := a.Acquire(ctx, path, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	cur := startCurator(t, path, "mutex")
	waitNodes(t, a, path, 2)
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := b.Acquire(ctx, path, zklock.RawPath())
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	waitNodes(t, a, path, 3)
	// The zklock waiter behind Curator's node wrote its deadline (its
	// context's) in its owner data: Curator queues and hands on with it.
	if q, err := a.Inspect(ctx, path, zklock.RawPath()); err != nil || q.Nodes[2].Owner.Deadline.IsZero() {
		t.Fatalf("the zklock waiter's node wrote no deadline: %v", err)
	}
	cur.quiet(300 * time.Millisecond) // excluded by the zklock holder
	held.Release(ctx)
	cur.expect("ACQUIRED", 30*time.Second)
	select {
	case <-got:
		t.Fatal("zklock acquired while Curator holds the lock")
	case <-time.After(300 * time.Millisecond):
	}
	cur.release()
	l := <-got
	if l == nil {
		t.FailNow()
	}
	l.Release(ctx)

	// Curator holds: zklock's try-lock sees it.
	cur2 := startCurator(t, path, "mutex")
	cur2.expect("ACQUIRED", 30*time.Second)
	if _, err := a.TryAcquire(ctx, path, zklock.RawPath()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("TryAcquire while Curator holds = %v", err)
	}
	cur2.release()
}

func TestIntegration_InteropCuratorReadWrite(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	path := root + "/locks/doc"
	c := newClient(t, root)
	r, err := c.Acquire(ctx, path, zklock.RawPath(), zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	reader := startCurator(t, path, "read")
	reader.expect("ACQUIRED", 30*time.Second) // readers share across languages
	writer := startCurator(t, path, "write")
	writer.quiet(300 * time.Millisecond)
	if _, err := c.Acquire(ctx, path, zklock.RawPath(), zklock.Write, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("zklock writer with Curator reader = %v", err)
	}
	r.Release(ctx)
	writer.quiet(300 * time.Millisecond) // the Curator reader still holds
	reader.release()
	writer.expect("ACQUIRED", 30*time.Second)
	if _, err := c.Acquire(ctx, path, zklock.RawPath(), zklock.Read, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("zklock reader while a Curator writer holds = %v", err)
	}
	writer.release()
}

func TestIntegration_InteropCuratorLeaderLatch(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	path := root + "/election"
	c := newClient(t, root)
	lead, err := c.Campaign(ctx, path, []byte("zklock-node"), zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	latch := startCurator(t, path, "latch")
	latch.quiet(300 * time.Millisecond)
	lead.Release(ctx)
	latch.expect("ACQUIRED", 30*time.Second)
	l, err := c.Leader(ctx, path, zklock.RawPath())
	if err != nil || string(l.Value) != "curator-peer" {
		t.Fatalf("Leader = %+v, %v; want Curator's participant", l, err)
	}
	latch.release()
}

func TestIntegration_InteropKazoo(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	path := root + "/locks/job"
	c := newClient(t, root)

	// kazoo with extra_lock_patterns=["-lock-"] and zklock exclude each
	// other in both directions, in queue order.
	held, err := c.Acquire(ctx, path, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	kz := startKazoo(t, path, "lock")
	kz.quiet(300 * time.Millisecond)
	held.Release(ctx)
	kz.expect("ACQUIRED", 30*time.Second)
	if _, err := c.TryAcquire(ctx, path, zklock.RawPath()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("TryAcquire while kazoo holds = %v", err)
	}
	kz.release()

	// kazoo with its defaults ignores names it does not know: it does NOT
	// exclude a zklock (or Curator) holder. zklock still sees kazoo's
	// "__lock__" nodes. README documents the setting.
	held, err = c.Acquire(ctx, path, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	// This node reports the client's hold-time median (it released the
	// lock once) and its deadline: kazoo, which never reads it, behaves
	// as before.
	if q, err := c.Inspect(ctx, path, zklock.RawPath()); err != nil || q.Nodes[0].Owner.HoldMedian == 0 || q.Nodes[0].Owner.Deadline.IsZero() {
		t.Fatalf("the zklock holder's node reports no hold median or deadline: %v", err)
	}
	plain := startKazoo(t, path, "lock-plain")
	plain.expect("ACQUIRED", 30*time.Second)
	held.Release(ctx)
	if _, err := c.TryAcquire(ctx, path, zklock.RawPath()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("zklock did not see kazoo's __lock__ node: %v", err)
	}
	plain.release()

	// kazoo's read lock shares with zklock readers.
	r, err := c.Acquire(ctx, path, zklock.RawPath(), zklock.Read)
	if err != nil {
		t.Fatal(err)
	}
	kr := startKazoo(t, path, "read")
	kr.expect("ACQUIRED", 30*time.Second)
	if _, err := c.Acquire(ctx, path, zklock.RawPath(), zklock.Write, zklock.Try()); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("zklock writer with a kazoo reader = %v", err)
	}
	kr.release()
	r.Release(ctx)
}
