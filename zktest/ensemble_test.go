package zktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

func modes(t *testing.T, e *zktest.Ensemble) []string {
	t.Helper()
	var ms []string
	for _, s := range e.Servers {
		if !s.Running() {
			ms = append(ms, "down")
			continue
		}
		m, err := s.Mode()
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

func count(ms []string, m string) (n int) {
	for _, x := range ms {
		if x == m {
			n++
		}
	}
	return n
}

func TestEnsembleFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	e, err := zktest.StartEnsemble(3)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Logf("ensemble up in %v", time.Since(start).Round(time.Millisecond))

	if got, want := e.ConnectString(), strings.Join(e.Addrs(), ","); got != want || len(e.Addrs()) != 3 {
		t.Fatalf("ConnectString = %q, Addrs = %q", got, e.Addrs())
	}
	if ms := modes(t, e); count(ms, "leader") != 1 || count(ms, "follower") != 2 {
		t.Fatalf("modes = %q, want one leader and two followers", ms)
	}

	leader, i, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	if leader != e.Servers[i] {
		t.Fatalf("Leader returned server %p, index %d", leader, i)
	}
	start = time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	_, j, err := e.Leader()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("new leader after %v", time.Since(start).Round(time.Millisecond))
	if j == i {
		t.Fatalf("killed server %d is still leader", i)
	}
	if ms := modes(t, e); count(ms, "leader") != 1 || count(ms, "follower") != 1 {
		t.Fatalf("modes after kill = %q", ms)
	}

	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitForQuorum(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if m, err := leader.Mode(); err != nil || m != "follower" {
		t.Fatalf("restarted old leader: Mode = %q, %v; want follower", m, err)
	}
}

func TestEnsembleOfOne(t *testing.T) {
	t.Parallel()
	e, err := zktest.StartEnsemble(1)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, i, err := e.Leader(); err != nil || i != 0 {
		t.Fatalf("Leader = %d, %v", i, err)
	}
}
