package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// ZooKeeper's request opcodes, as they appear on the wire.
var (
	zkReads  = map[int32]string{3: "exists", 4: "getData", 6: "getACL", 8: "getChildren", 12: "getChildren2", 22: "multiRead", 103: "getEphemerals", 104: "getAllChildrenNumber"}
	zkQuiet  = map[int32]string{11: "ping", -11: "closeSession", 100: "auth", 101: "setWatches", 105: "setWatches2"} // not reads, not writes
	zkOpName = func(op int32) string {
		if n, ok := zkReads[op]; ok {
			return n
		}
		if n, ok := zkQuiet[op]; ok {
			return n
		}
		return "op " + strconv.Itoa(int(op))
	}
)

// countingProxy forwards connections to a ZooKeeper server and counts the
// requests clients send through it, by opcode, from the frames on the
// wire.
type countingProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	ops    map[int32]int
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln, target: target, ops: map[int32]int{}}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.handle(c)
		}
	}()
	return p
}

func (p *countingProxy) handle(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); c.Close() }()
	r := bufio.NewReader(c)
	for first := true; ; first = false {
		var size [4]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		if !first && len(body) >= 8 { // the first frame is the session request, without a header
			p.mu.Lock()
			p.ops[int32(binary.BigEndian.Uint32(body[4:8]))]++
			p.mu.Unlock()
		}
		if _, err := s.Write(append(size[:], body...)); err != nil {
			return
		}
	}
}

// take returns the reads counted since the last take, and the requests
// that are neither reads nor the session's own (ping, close, watches
// set again after a reconnection, authentication).
func (p *countingProxy) take() (reads int, others []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for op, n := range p.ops {
		switch {
		case zkReads[op] != "":
			reads += n
		case zkQuiet[op] == "":
			others = append(others, fmt.Sprintf("%s ×%d", zkOpName(op), n))
		}
	}
	clear(p.ops)
	return reads, others
}

// TestTopReadsPerRefresh counts on the wire the requests one refresh of
// top sends, and checks them against TopReads, the formula its help and
// docs/operations.md state (1 + Σ(2 + n) over the queues in use it reads,
// one more per empty queue), with and without a --max-reads cap that
// bites; it also checks that top writes nothing.
func TestTopReadsPerRefresh(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "r/a", "a")             // 1 node
	holdWithWaiters(t, root, "r/b", "b", "b1", "b2") // 3
	holdWithWaiters(t, root, "r/c", "c", "c1")       // 2
	conn := client(t, root).Conn()                   // and an empty queue
	if _, err := conn.CreateContainer(root+"/"+zklock.EscapeResource("r/d"), nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	proxy := newCountingProxy(t, zkAddr)
	top := func(args ...string) []topDoc {
		t.Helper()
		r := zkl(t, nil, append([]string{"top", "--json", "--servers", proxy.ln.Addr().String(), "--root", root}, args...)...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("top %q: exit %d, stderr %q", args, r.code, r.stderr)
		}
		var docs []topDoc
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var d topDoc
			if err := json.Unmarshal([]byte(line), &d); err != nil {
				t.Fatalf("%v: %q", err, line)
			}
			docs = append(docs, d)
		}
		return docs
	}
	check := func(what string, wantReads int, docs []topDoc) {
		t.Helper()
		reads, others := proxy.take()
		if len(others) > 0 {
			t.Errorf("%s: top sent requests other than reads: %v", what, others)
		}
		if len(docs) != 1 || reads != wantReads || docs[0].Reads != wantReads || docs[0].Reads > docs[0].MaxReads {
			t.Errorf("%s: %d reads on the wire, %d refreshes, JSON says %+v; want %d", what, reads, len(docs), docs, wantReads)
		}
	}

	docs := top("--once")
	check("all read", TopReads(1, 3, 2)+1, docs)
	if d := docs[0]; d.Total != 4 || d.Empty != 1 || d.Unread != 0 || len(d.Resources) != 3 {
		t.Errorf("all read: %+v", d)
	}

	// 8 reads: the root, r/a listed and inspected (1 + 2), r/b and r/c
	// listed only (their inspections, 4 and 3 reads, pass the cap), r/d
	// listed (empty): 7. By waiters, a queue not inspected counts all its
	// nodes but one: r/b (~2), r/c (~1), r/a (0).
	docs = top("--once", "--max-reads", "8")
	check("--max-reads 8", 7, docs)
	if d := docs[0]; len(d.Resources) != 3 || d.Unread != 0 || d.Empty != 1 ||
		d.Resources[0].Resource != "r/b" || d.Resources[0].Inspected || d.Resources[0].Nodes != 3 || d.Resources[0].Holders != nil ||
		d.Resources[1].Resource != "r/c" || d.Resources[1].Inspected || d.Resources[1].Nodes != 2 ||
		d.Resources[2].Resource != "r/a" || !d.Resources[2].Inspected || *d.Resources[2].Holders != 1 {
		t.Errorf("--max-reads 8: %+v", d)
	}

	// 3 reads: the root, r/a listed, r/b listed; r/c and r/d unread.
	docs = top("--once", "--max-reads", "3")
	check("--max-reads 3", 3, docs)
	if d := docs[0]; d.Unread != 2 || len(d.Resources) != 2 {
		t.Errorf("--max-reads 3: %+v", d)
	}

	// Refresh after refresh (the watches set by then: plain listings) the
	// cost stays the same. --for may end a refresh, done or half done,
	// before it is printed: at most one refresh's reads more than the
	// refreshes printed.
	docs = top("--interval", "250ms", "--for", "2s")
	reads, others := proxy.take()
	per := TopReads(1, 3, 2) + 1
	if len(others) > 0 || len(docs) < 3 || reads < per*len(docs) || reads > per*(len(docs)+1) {
		t.Errorf("%d refreshes in 2s, %d reads on the wire (others %v); want at least 3 refreshes of %d reads", len(docs), reads, others, per)
	}
	for i, d := range docs {
		if d.Reads != per {
			t.Errorf("refresh %d: %d reads, want %d", i, d.Reads, per)
		}
	}
}

// TestTopDocsNumbers: the numbers docs/operations.md and top --help quote
// about top's cost come from the code.
func TestTopDocsNumbers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(doc), "**Cost on ZooKeeper.**")
	if start < 0 {
		t.Fatal("docs/operations.md has no top cost paragraph")
	}
	cost := strings.Join(strings.Fields(string(doc[start:start+strings.Index(string(doc[start:]), "\n\n")])), " ")
	help := strings.Join(strings.Fields(zkl(t, nil, "top", "--help").stdout), " ")
	perSecond := int(time.Second / TopMinRefresh)
	twenty := make([]int, 20)
	for i := range twenty {
		twenty[i] = 5
	}
	for _, want := range []string{
		"1 + Σ(2 + n)",
		fmt.Sprintf("20 resources with 5 nodes each, %d reads", TopReads(twenty...)),
		fmt.Sprintf("(default %d)", DefaultTopMaxReads),
		fmt.Sprintf("at least %d ms apart", TopMinRefresh.Milliseconds()),
		fmt.Sprintf("at most %d a second, %d reads a second at the default cap", perSecond, perSecond*DefaultTopMaxReads),
	} {
		if !strings.Contains(cost, want) {
			t.Errorf("docs/operations.md's top cost paragraph lacks %q:\n%s", want, cost)
		}
	}
	for _, want := range []string{"1 + Σ(2 + n)", "1 + N×(2 + n)", fmt.Sprintf("(default %d)", DefaultTopMaxReads),
		fmt.Sprintf("at least %v apart (at most %d a second)", TopMinRefresh, perSecond)} {
		if !strings.Contains(help, want) {
			t.Errorf("top --help lacks %q", want)
		}
	}
	flat := strings.Join(strings.Fields(string(doc)), " ")
	if !strings.Contains(flat, fmt.Sprintf("at least every `--interval` (default %d s)", int(DefaultTopInterval.Seconds()))) {
		t.Errorf("docs/operations.md does not give top's --interval default as %v", DefaultTopInterval)
	}
	watched := fmt.Sprintf("up to %d queues at a time", TopMaxWatches-1)
	if !strings.Contains(flat, watched) || !strings.Contains(help, watched) {
		t.Errorf("docs/operations.md or top --help does not say %q", watched)
	}
}

// TestTopOrder: the resources in use at the last refresh come first,
// hottest first (those gone since left out); the others follow in name
// order from where the last refresh stopped, wrapping around.
func TestTopOrder(t *testing.T) {
	r := &topReader{busy: []string{"c", "x", "a"}, next: "d"}
	hot, others := r.order([]string{"a", "b", "c", "d", "e"})
	if strings.Join(hot, " ") != "c a" || strings.Join(others, " ") != "d e b" {
		t.Errorf("hot %q, others %q; want [c a] and [d e b]", hot, others)
	}
	r = &topReader{}
	if hot, others = r.order(nil); hot != nil || others != nil {
		t.Errorf("no resources: %q %q", hot, others)
	}
}

// TestTopCapReadsEveryResourceInTurn: with a cap too small for all the
// busy resources, every refresh stays within it and, refresh after
// refresh, every resource is read: the busy ones do not starve the rest.
func TestTopCapReadsEveryResourceInTurn(t *testing.T) {
	root := zktest.UniqueRoot(t)
	all := []string{"q/1", "q/2", "q/3", "q/4", "q/5", "q/6"}
	for _, res := range all {
		holdWithWaiters(t, root, res, "h"+res) // 1 node: 3 reads each, 19 for all
	}
	r := zkl(t, nil, "top", "--json", "--root", root, "--max-reads", "8", "--interval", "250ms", "--for", "3s")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, line := range lines {
		var d topDoc
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d.Reads > 8 || d.Total != len(all) {
			t.Errorf("refresh over the cap, or miscounted: %s", line)
		}
		for _, res := range d.Resources {
			if res.Inspected {
				seen[res.Resource] = true
			}
		}
	}
	for _, res := range all {
		if !seen[res] {
			t.Errorf("%s was never read in %d refreshes", res, len(lines))
		}
	}
}

// TestWatchesLimit: with a limit, watches sets no more than that many
// watches at once (the listing is made either way), and a fired watch
// frees its place.
func TestWatchesLimit(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := client(t, root)
	for _, res := range []string{"w/1", "w/2", "w/3"} {
		holdWithWaiters(t, root, res, "h")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWatches(ctx, c.Conn())
	w.limit = 2
	for _, res := range []string{"w/1", "w/2", "w/3"} {
		names, err := w.children(ctx, root+"/"+zklock.EscapeResource(res))
		if err != nil || len(names) != 1 {
			t.Fatalf("%s: %q, %v", res, names, err)
		}
	}
	armed := func() []string {
		w.mu.Lock()
		defer w.mu.Unlock()
		return slices.Sorted(maps.Keys(w.armed))
	}
	p1, p3 := root+"/"+zklock.EscapeResource("w/1"), root+"/"+zklock.EscapeResource("w/3")
	if got := armed(); len(got) != 2 || slices.Contains(got, p3) {
		t.Fatalf("watched %q; want the first two queues only", got)
	}
	// A new waiter on w/1 fires its watch: changed is signalled and w/3 may be watched.
	waiter := client(t, root)
	go func() { _, _ = waiter.Acquire(ctx, "w/1") }()
	select {
	case <-w.changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no change signalled")
	}
	eventually(t, "w/1's watch to be released", func() bool { return !slices.Contains(armed(), p1) })
	if _, err := w.children(ctx, p3); err != nil || !slices.Contains(armed(), p3) {
		t.Errorf("after w/1's watch fired, w/3 not watched: %q, %v", armed(), err)
	}
}
