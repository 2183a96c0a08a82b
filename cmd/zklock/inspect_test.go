package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// queueDoc is the JSON of "zklock show --json".
type queueDoc struct {
	Resource string
	Path     string
	Holders  int
	Waiting  int
	Nodes    []struct {
		Position   int
		State      string
		Mode       string
		Host       string
		PID        int
		Label      string
		Token      int64
		Created    time.Time
		AgeSeconds float64 `json:"age_seconds"`
		Session    string
		Node       string
		Path       string
	}
}

// holdWithWaiters locks resource through a client labelled holder and
// queues one waiter per label behind it, each on its own client, and waits
// until ZooKeeper shows them all.
func holdWithWaiters(t *testing.T, root, resource, holder string, waiters ...string) *zklock.Lease {
	t.Helper()
	ctx := context.Background()
	lease, err := client(t, root, zklock.WithLabel(holder)).Acquire(ctx, resource)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lease.Release(ctx) })
	for i, label := range waiters {
		c := client(t, root, zklock.WithLabel(label))
		wctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		go func() {
			if l, err := c.Acquire(wctx, resource); err == nil {
				l.Release(ctx)
			}
		}()
		eventually(t, label+" queued", func() bool { return queueLen(t, c, resource) == i+2 })
	}
	return lease
}

func TestLsAndShow(t *testing.T) {
	root := zktest.UniqueRoot(t)
	lease := holdWithWaiters(t, root, "jobs/a", "holder-a", "waiter-1", "waiter-2")
	holdWithWaiters(t, root, "jobs/b", "holder-b")
	holdWithWaiters(t, root, "other", "holder-o")
	host, _ := os.Hostname()

	t.Run("ls", func(t *testing.T) {
		r := zkl(t, nil, "ls", "--root", root)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "RESOURCE") {
			t.Fatalf("want a header and 3 rows:\n%s", r.stdout)
		}
		want := []string{"jobs/a 1 2 holder-a (" + host + ", pid " + strconv.Itoa(os.Getpid()) + ") " + strconv.FormatInt(lease.Token(), 10),
			"jobs/b 1 0 holder-b", "other 1 0 holder-o"}
		for i, w := range want {
			if got := strings.Join(strings.Fields(lines[i+1]), " "); !strings.HasPrefix(got, w) {
				t.Errorf("row %d = %q, want prefix %q", i+1, got, w)
			}
		}
	})
	t.Run("ls prefix json", func(t *testing.T) {
		r := zkl(t, nil, "ls", "jobs/", "--json", "--root", root) // flags after the argument
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var doc struct {
			Root      string
			Resources []queueDoc
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		if doc.Root != root || len(doc.Resources) != 2 || doc.Resources[0].Resource != "jobs/a" || doc.Resources[1].Resource != "jobs/b" ||
			doc.Resources[0].Waiting != 2 {
			t.Errorf("ls --json = %+v", doc)
		}
	})
	t.Run("ls empty", func(t *testing.T) {
		r := zkl(t, nil, "ls", "--root", root, "nothing/")
		if r.code != 0 || !strings.Contains(r.stdout, `no resources in use starting with "nothing/" under `+root) {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("show json", func(t *testing.T) {
		// connection flags before the command name are taken too
		r := zkl(t, nil, "--root", root, "show", "--json", "jobs/a")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var q queueDoc
		if err := json.Unmarshal([]byte(r.stdout), &q); err != nil {
			t.Fatalf("%v:\n%s", err, r.stdout)
		}
		if q.Resource != "jobs/a" || q.Path != root+"/jobs%2Fa" || q.Holders != 1 || q.Waiting != 2 || len(q.Nodes) != 3 {
			t.Fatalf("show --json = %+v", q)
		}
		for i, label := range []string{"holder-a", "waiter-1", "waiter-2"} {
			n := q.Nodes[i]
			state := "waiting"
			if i == 0 {
				state = "holds"
			}
			if n.Position != i || n.State != state || n.Label != label || n.Host != host || n.PID != os.Getpid() ||
				n.Mode != "exclusive" || !strings.HasPrefix(n.Path, q.Path+"/") || !strings.HasSuffix(n.Path, "/"+n.Node) ||
				!strings.HasPrefix(n.Session, "0x") || n.Created.IsZero() || n.AgeSeconds < 0 {
				t.Errorf("node %d = %+v", i, n)
			}
			if i > 0 && n.Token <= q.Nodes[i-1].Token {
				t.Errorf("tokens not increasing along the queue: %+v", q.Nodes)
			}
		}
		if q.Nodes[0].Token != lease.Token() || q.Nodes[0].Path != lease.Path() {
			t.Errorf("holder token %d path %s, lease says %d %s", q.Nodes[0].Token, q.Nodes[0].Path, lease.Token(), lease.Path())
		}
	})
	t.Run("show table", func(t *testing.T) {
		r := zkl(t, nil, "show", "jobs/a", "--servers", "zk://"+zkAddr+root) // root from the connection string
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		if len(lines) != 9 {
			t.Fatalf("want 4 header lines, a blank line, a table header and 3 rows:\n%s", r.stdout)
		}
		for i, want := range []string{"resource jobs/a", "queue " + root + "/jobs%2Fa", "state 1 holder, 2 waiting",
			"hold p50 unknown: no node reports one", "",
			"POS STATE MODE HOST PID LABEL TOKEN AGE WAIT≈ DEADLINE SESSION NODE",
			"0 holds exclusive " + host + " " + strconv.Itoa(os.Getpid()) + " holder-a " + strconv.FormatInt(lease.Token(), 10),
			"1 waiting exclusive " + host, "2 waiting exclusive " + host} {
			if got := strings.Join(strings.Fields(lines[i]), " "); !strings.HasPrefix(got, want) {
				t.Errorf("line %d = %q, want prefix %q", i, got, want)
			}
		}
		for i, label := range []string{"holder-a", "waiter-1", "waiter-2"} {
			if !strings.Contains(lines[6+i], " "+label+" ") {
				t.Errorf("row %d lacks %s: %q", i, label, lines[6+i])
			}
		}
	})
	t.Run("show unknown resource", func(t *testing.T) {
		r := zkl(t, []string{"ZKLOCK_SERVERS=zk://" + zkAddr + root}, "show", "no/such")
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "free: no holder, no waiters") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		r = zkl(t, nil, "show", "--json", "--root", root, "no/such")
		var q queueDoc
		if err := json.Unmarshal([]byte(r.stdout), &q); r.code != 0 || err != nil || q.Holders != 0 || q.Nodes == nil || len(q.Nodes) != 0 {
			t.Errorf("exit %d, err %v, %q", r.code, err, r.stdout)
		}
	})
}

func TestShowRawPath(t *testing.T) {
	raw := zktest.UniqueRoot(t) + "-raw/locks/payments"
	c := client(t, zktest.UniqueRoot(t), zklock.WithLabel("java-ish"))
	lease, err := c.Acquire(context.Background(), raw, zklock.RawPath())
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.Background())
	r := zkl(t, nil, "show", "--raw", "--json", raw)
	var q queueDoc
	if err := json.Unmarshal([]byte(r.stdout), &q); r.code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	if q.Path != raw || len(q.Nodes) != 1 || q.Nodes[0].Label != "java-ish" || q.Nodes[0].Token != lease.Token() {
		t.Errorf("show --raw = %+v", q)
	}
}

// lines collects a process's stdout line by line.
func waitOutput(t *testing.T, buf *syncBuffer, sub string) {
	t.Helper()
	eventually(t, "output "+strconv.Quote(sub), func() bool { return strings.Contains(buf.String(), sub) })
}

func TestWatchPiped(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := context.Background()
	a := client(t, root, zklock.WithLabel("first"))
	b := client(t, root, zklock.WithLabel("second"))
	cmd, out, errb := start(t, nil, "watch", "--root", root, "--for", "5m", "--interval", "200ms", "jobs/w")
	waitOutput(t, out, "queue     empty")

	la, err := a.Acquire(ctx, "jobs/w")
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "acquired  pos 0  exclusive  first")
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := b.Acquire(ctx, "jobs/w")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	waitOutput(t, out, "waiting   pos 1  exclusive  second")
	waitOutput(t, out, "queue     1 holder, 1 waiting")
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lb := <-got
	waitOutput(t, out, "acquired  pos 0  exclusive  second")
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the queue empty again", func() bool { return strings.Count(out.String(), "queue     empty") == 2 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 0 || errb.String() != "" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("bad line %q", line)
		}
		if _, err := time.Parse("15:04:05.000", f[0]); err != nil {
			t.Errorf("line %q does not start with a time: %v", line, err)
		}
		if f[1] == "queue" {
			continue // one per batch; a hand-off may span one or two reads
		}
		events = append(events, f[1]+" "+f[5]) // event and label
	}
	want := "acquired first waiting second released first acquired second released second"
	if strings.Join(events, " ") != want {
		t.Errorf("events:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(events, " "), want, out.String())
	}
}

func TestWatchFor(t *testing.T) {
	root := zktest.UniqueRoot(t)
	lease := holdWithWaiters(t, root, "busy", "holder", "waiter")
	start := time.Now()
	r := zkl(t, nil, "watch", "--root", root, "--for", "1s", "busy")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if time.Since(start) < time.Second {
		t.Errorf("watch --for 1s returned after %v", time.Since(start))
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "holds     pos 0  exclusive  holder") ||
		!strings.Contains(lines[0], "token "+strconv.FormatInt(lease.Token(), 10)) ||
		!strings.Contains(lines[1], "waiting   pos 1  exclusive  waiter") || !strings.HasSuffix(lines[2], "queue     1 holder, 1 waiting") {
		t.Errorf("watch output:\n%s", r.stdout)
	}
}

// TestLsHidesEmptyQueues: ls lists resources in use; an empty queue (its
// container node not yet removed by ZooKeeper) shows only with --all,
// marked as such.
func TestLsHidesEmptyQueues(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "jobs/a", "holder-a", "waiter")
	c := client(t, root)
	// An empty queue as an acquire leaves it once released, made directly:
	// a container that never had a child is never removed, so the test
	// cannot race ZooKeeper's container cleanup.
	if _, err := c.Conn().CreateContainer(root+"/"+zklock.EscapeResource("jobs/idle"), nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	rows := func(stdout string) []string {
		var rs []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			rs = append(rs, strings.Join(strings.Fields(line), " "))
		}
		return rs
	}
	r := zkl(t, nil, "ls", "--root", root)
	if got := rows(r.stdout); r.code != 0 || len(got) != 1 || !strings.HasPrefix(got[0], "jobs/a 1 1 holder-a") {
		t.Errorf("ls: exit %d, rows %q; want jobs/a alone (stderr %q)", r.code, got, r.stderr)
	}
	r = zkl(t, nil, "ls", "--root", root, "--all")
	if got := rows(r.stdout); r.code != 0 || len(got) != 2 || got[1] != "jobs/idle 0 0 (empty) - -" {
		t.Errorf("ls --all: exit %d, rows %q; want jobs/a and \"jobs/idle 0 0 (empty) - -\"", r.code, got)
	}
	r = zkl(t, nil, "ls", "--root", root, "--json")
	var doc struct{ Resources []queueDoc }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Resources) != 1 || doc.Resources[0].Resource != "jobs/a" {
		t.Errorf("ls --json: %v, %s", err, r.stdout)
	}
	r = zkl(t, nil, "ls", "--root", root, "--json", "--all")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Resources) != 2 || doc.Resources[1].Resource != "jobs/idle" {
		t.Errorf("ls --json --all: %v, %s", err, r.stdout)
	}
	r = zkl(t, nil, "ls", "--root", root, "jobs/idle")
	if want := `no resources in use starting with "jobs/idle" under ` + root + " (1 empty queue: --all lists them)\n"; r.code != 0 || r.stdout != want {
		t.Errorf("ls jobs/idle: exit %d, stdout %q; want %q", r.code, r.stdout, want)
	}
}
