package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Three languages on one lock path: zklock (Go), Curator's
// InterProcessMutex (Java) and kazoo (Python) with its Curator-compatible
// node name (CuratorCompatibleLock in testdata/interop/kazoo_peer.py),
// all contending at once. Each holder creates one marker file exclusively
// while it holds and deletes it before it releases: a marker that already
// exists is another holder inside, an overlap. (With kazoo's own node name,
// "__lock__", Curator misorders kazoo's nodes: docs/interop.md.)

// interopRounds is how many times each contender acquires.
const interopRounds = 100

// loopResult is what one contender reports.
type loopResult struct {
	who                string
	acquired, overlaps int
}

// zklockLoop acquires n times on its own client, with the marker.
func zklockLoop(ctx context.Context, c *zklock.Client, path, marker string, n int) (loopResult, error) {
	r := loopResult{who: "zklock"}
	for range n {
		l, err := c.Acquire(ctx, path, zklock.RawPath())
		if err != nil {
			return r, err
		}
		r.acquired++
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		mine := err == nil
		switch {
		case mine:
			f.Close()
		case errors.Is(err, fs.ErrExist):
			r.overlaps++
		default:
			l.Release(ctx)
			return r, err
		}
		time.Sleep(time.Millisecond)
		if mine {
			if err := os.Remove(marker); err != nil {
				l.Release(ctx)
				return r, err
			}
		}
		if err := l.Release(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

// done reads a peer's "DONE <acquisitions> <overlaps>" line.
func (p *peer) done(within time.Duration) loopResult {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		f := strings.Fields(l)
		if !ok || len(f) != 3 || f[0] != "DONE" {
			p.t.Fatalf("%s said %q (closed: %v), want DONE n overlaps", p.name, l, !ok)
		}
		n, _ := strconv.Atoi(f[1])
		o, _ := strconv.Atoi(f[2])
		return loopResult{who: p.name, acquired: n, overlaps: o}
	case <-time.After(within):
		p.t.Fatalf("%s did not finish within %v", p.name, within)
	}
	return loopResult{}
}

func TestIntegration_InteropThreeLanguages(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	path := root + "/locks/shared"
	marker := filepath.Join(t.TempDir(), "inside")
	a, b := newClient(t, root), newClient(t, root)

	cur := startCurator(t, path, "loop", strconv.Itoa(interopRounds), marker)
	kz := startKazoo(t, path, "loop", "lock-curator", strconv.Itoa(interopRounds), marker)

	// Everyone starts at once.
	for _, p := range []*peer{cur, kz} {
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	goResults := make([]loopResult, 2)
	errs := make([]error, 2)
	for i, c := range []*zklock.Client{a, b} {
		wg.Go(func() { goResults[i], errs[i] = zklockLoop(ctx, c, path, marker, interopRounds) })
	}
	peers := []loopResult{cur.done(5 * time.Minute), kz.done(5 * time.Minute)}
	wg.Wait()
	results := append(goResults, peers...)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	total, overlaps := 0, 0
	var lines []string
	for _, r := range results {
		total += r.acquired
		overlaps += r.overlaps
		lines = append(lines, fmt.Sprintf("%s %d/%d", r.who, r.acquired, r.overlaps))
	}
	t.Logf("acquisitions/overlaps: %s; total %d acquisitions, %d overlaps", strings.Join(lines, ", "), total, overlaps)
	if total != 4*interopRounds {
		t.Errorf("%d acquisitions, want %d", total, 4*interopRounds)
	}
	if overlaps != 0 {
		t.Errorf("%d overlaps: two holders at once on %s", overlaps, path)
	}
	if n := queueLen(t, a, path); n != 0 {
		t.Errorf("%d nodes left in the queue", n)
	}
}

// queueLen is the number of nodes in the queue at the raw path.
func queueLen(t *testing.T, c *zklock.Client, path string) int {
	t.Helper()
	q, err := c.Inspect(context.Background(), path, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	return len(q.Nodes)
}
