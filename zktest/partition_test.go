package zktest_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zktest"
)

// orderedHosts is a go-zookeeper HostProvider that tries servers in the
// order given, so a test can put a client on a server of its choosing and
// see where it moves.
type orderedHosts struct {
	mu      sync.Mutex
	servers []string
	next    int
	tried   int
}

func (h *orderedHosts) Init([]string) error { return nil }
func (h *orderedHosts) Len() int            { return len(h.servers) }
func (h *orderedHosts) Connected() {
	h.mu.Lock()
	h.tried = 0
	h.mu.Unlock()
}
func (h *orderedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[h.next%len(h.servers)]
	h.next++
	h.tried++
	return s, h.tried > len(h.servers)
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// states records every session state a client went through (go-zookeeper
// drops events its channel has no room for: it must be drained).
type states struct {
	mu   sync.Mutex
	seen map[zk.State]bool
}

func (s *states) saw(st zk.State) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[st]
}

// client connects to servers, in that order, and waits for its session.
func client(t *testing.T, servers []string, timeout time.Duration) (*zk.Conn, *states) {
	t.Helper()
	conn, events, err := zk.Connect(servers, timeout, zk.WithHostProvider(&orderedHosts{servers: servers}), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	st := &states{seen: map[zk.State]bool{}}
	go func() {
		for ev := range events {
			st.mu.Lock()
			st.seen[ev.State] = true
			st.mu.Unlock()
		}
	}()
	eventually(t, 20*time.Second, fmt.Sprintf("a session with %v", servers), func() error {
		if !st.saw(zk.StateHasSession) {
			return errors.New("none yet")
		}
		return nil
	})
	return conn, st
}

// eventually polls f every 50ms until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < timeout {
		if err = f(); err == nil {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not after %v: %v", what, timeout, err)
	return 0
}

// wiring checks how ZooKeeper 3.8 opens its links: one quorum connection
// from each follower to the leader, none elsewhere; election connections
// (opened when a server has votes to send, and not always kept once a
// leader is elected) only from a higher id to a lower one.
func wiring(e *zktest.Ensemble, leader int) error {
	for i := range e.Servers {
		for j := range e.Servers {
			if i == j {
				continue
			}
			q, el, err := e.LinkConns(i, j)
			if err != nil {
				return err
			}
			wantQ := 0
			if j == leader {
				wantQ = 1
			}
			if q != wantQ {
				return fmt.Errorf("link zk%d→zk%d: %d quorum connections, want %d (leader zk%d)", i+1, j+1, q, wantQ, leader+1)
			}
			if el > 0 && i < j {
				return fmt.Errorf("link zk%d→zk%d: %d election connections opened by the lower id", i+1, j+1, el)
			}
		}
	}
	return nil
}

func exists(conn *zk.Conn, path string) error {
	ok, _, err := conn.Exists(path)
	if err != nil {
		return err
	}
	if !ok {
		return zk.ErrNoNode
	}
	return nil
}

// Partitions inside an ensemble whose server links run through proxies:
// isolating the leader makes the other two elect a new one; isolating a
// follower moves the clients that can move, and expires the session of the
// one that cannot; a bridge keeps a quorum; healing restores all three.
func TestIntegration_EnsemblePartitions(t *testing.T) {
	const tick = 500 * time.Millisecond
	e, err := zktest.StartEnsemble(3, zktest.WithTickTime(tick), zktest.WithLinkProxies())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := (&zktest.Ensemble{}).Isolate(0, zktest.CutReset); !errors.Is(err, zktest.ErrNoLinkProxies) {
		t.Fatalf("Isolate without link proxies: %v", err)
	}
	if err := (&zktest.Ensemble{}).Delay(0, 1, time.Second); !errors.Is(err, zktest.ErrNoLinkProxies) {
		t.Fatalf("Delay without link proxies: %v", err)
	}
	if err := e.Cut(1, 1, zktest.CutReset); err == nil {
		t.Fatal("a link from a server to itself was cut")
	}
	leader, err := e.WaitForMajority(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "wiring", func() error { return wiring(e, leader) })
	addrs := e.Addrs()

	// A follower cut off, with a client that can only reach it and one
	// that can move. The follower learns at once (reset) and stops serving.
	f := (leader + 1) % 3
	other := 3 - leader - f
	const session = 2 * time.Second
	stuck, stuckEvents := client(t, []string{addrs[f]}, session)
	mover, _ := client(t, []string{addrs[f], addrs[other], addrs[leader]}, session)
	watcher, _ := client(t, []string{addrs[leader], addrs[other], addrs[f]}, session)
	if _, err := watcher.Create("/p", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	stuckNode, err := stuck.Create("/p/stuck", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	moverNode, err := mover.Create("/p/mover", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if mover.Server() != addrs[f] || stuck.Server() != addrs[f] {
		t.Fatalf("clients on %s and %s, want both on zk%d %s", mover.Server(), stuck.Server(), f+1, addrs[f])
	}
	moverSession := mover.SessionID()
	cut := time.Now()
	if err := e.Isolate(f, zktest.CutReset); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "isolated follower stops serving", func() error {
		if m := e.Serving()[f]; m != "" {
			return fmt.Errorf("zk%d still %s", f+1, m)
		}
		return nil
	})
	moved := eventually(t, 10*time.Second, "the client that can move moves", func() error {
		if s := mover.Server(); s == addrs[f] || mover.State() != zk.StateHasSession {
			return fmt.Errorf("on %s, %v", s, mover.State())
		}
		return nil
	})
	if mover.SessionID() != moverSession {
		t.Fatalf("the client that moved has a new session %#x (was %#x)", mover.SessionID(), moverSession)
	}
	eventually(t, session+5*time.Second, "the stuck client's node expires", func() error {
		if err := exists(watcher, stuckNode); errors.Is(err, zk.ErrNoNode) {
			return nil
		} else if err != nil {
			return err
		}
		return errors.New("still there")
	})
	expired := time.Since(cut)
	if err := exists(watcher, moverNode); err != nil {
		t.Fatalf("the moved client's node: %v", err)
	}
	t.Logf("follower zk%d isolated: mover on %s after %v; stuck session's node gone %v after the cut",
		f+1, mover.Server(), moved.Round(time.Millisecond), expired.Round(time.Millisecond))
	if _, err := e.WaitForMajority(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, session+10*time.Second, "the stuck client learns its session expired", func() error {
		if !stuckEvents.saw(zk.StateExpired) {
			return errors.New("no expiry event yet")
		}
		return nil
	})

	// The leader cut off silently: the other two elect one of themselves.
	_, old, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Isolate(old, zktest.CutSilent); err != nil {
		t.Fatal(err)
	}
	elected := eventually(t, 30*time.Second, "a new leader among the other two", func() error {
		modes := e.Serving()
		for i, m := range modes {
			if i != old && m == "leader" && modes[old] == "" {
				return nil
			}
		}
		return fmt.Errorf("modes %q", modes)
	})
	t.Logf("leader zk%d isolated: new leader after %v", old+1, elected.Round(time.Millisecond))
	// The client may still be going round the servers, none of which
	// served a moment ago: it writes once it finds the new leader's side.
	eventually(t, 15*time.Second, "a write to the majority", func() error {
		_, err := watcher.Create("/p/after-leader-cut", nil, 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	if err := e.Heal(); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("healed: three serving after %v", time.Since(healed).Round(time.Millisecond))

	// A bridge through a follower: the leader and the other follower no
	// longer see each other. The leader and the bridge are a quorum.
	_, l, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	b := (l + 1) % 3
	c := 3 - l - b
	if err := e.Bridge(b, zktest.CutReset); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the far follower stops serving", func() error {
		if m := e.Serving()[c]; m != "" {
			return fmt.Errorf("zk%d still %s", c+1, m)
		}
		return nil
	})
	lb, err := e.WaitForMajority(15 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if lb == c {
		t.Fatalf("the far follower zk%d leads", c+1)
	}
	bridge, _ := client(t, []string{addrs[b]}, session)
	eventually(t, 15*time.Second, "a write through the bridge", func() error {
		_, err := bridge.Create("/p/through-bridge", nil, 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	// Still so a while later: the far follower cannot join through the
	// bridge.
	time.Sleep(3 * tick * 5)
	if m := e.Serving(); m[c] != "" || m[l] == "" || m[b] == "" {
		t.Fatalf("modes with bridge zk%d: %q", b+1, m)
	}
	if err := e.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	l, err = e.WaitForMajority(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "wiring after heal", func() error { return wiring(e, l) })
	far, _ := client(t, []string{addrs[c]}, session)
	if err := exists(far, "/p/through-bridge"); err != nil {
		t.Fatalf("the far follower after heal: %v", err)
	}

	// A slow link: a sync on a follower is answered by the leader, a
	// round trip on their link, which now carries every byte late.
	const delay = 300 * time.Millisecond
	if err := e.Delay(c, c, delay); err == nil {
		t.Fatal("a link from a server to itself was delayed")
	}
	if err := e.Delay(l, c, delay); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := far.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*delay {
		t.Fatalf("a sync on zk%d over a link delayed by %v answered after %v; want a round trip on it, %v or more", c+1, delay, took, 2*delay)
	}
	if err := e.Delay(l, c, 0); err != nil {
		t.Fatal(err)
	}
}
