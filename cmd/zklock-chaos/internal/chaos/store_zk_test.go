package chaos

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// The store in ZooKeeper on a real server: every recipe's lease writes
// through Client.Fenced; a holder whose node an operator deleted is
// refused by ZooKeeper (WriteStale) although its client has not asked
// whether it still holds, and the next holder's write commits; a write to
// a resource with no register fails as the store's own error. The log
// read back gives every committed write, per resource in commit order
// with no number skipped by the refusal, and nothing of the refused ones.
// A log that lost an entry, or a register written outside the log, does
// not read back as whole.
func TestIntegration_ZKStore(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func() *zklock.Client {
		c, err := zklock.Connect(ctx, []string{srv.Addr()}, zklock.WithRoot("/locks"), zklock.WithSessionTimeout(4*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c1, c2 := connect(), connect()
	op, err := dialQuiet([]string{srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	s := zkStore{root: "/chaos-store"}
	if err := s.install(op, []string{"a", "rw", "sem", "all-a", "all-b", "el", "a/b c"}); err != nil {
		t.Fatal(err)
	}
	var id int64
	write := func(c *zklock.Client, l *zklock.Lease, res, mode string, tok int64, want string) {
		t.Helper()
		id++
		e := zkWrite(ctx, s, c, l, writeRequest{Proc: 7, Slot: 1, Op: id, Resource: res, Token: tok, Mode: mode, Sent: 1000 + id, ID: writeID(7, id)})
		if e.Kind != EvWrite || e.Outcome != want || e.Accepted != (want == WriteCommitted) || e.Called == 0 || e.T < e.Called || e.WriteID != writeID(7, id) {
			t.Fatalf("write %d (%s %s %#x): %+v; want %s", id, res, mode, tok, e, want)
		}
	}
	acquire := func(c *zklock.Client, res string, opts ...zklock.AcquireOption) *zklock.Lease {
		t.Helper()
		l, err := c.Acquire(ctx, res, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	// An exclusive holder writes, loses its node to an operator, and
	// writes again without looking: refused. The next holder's commits.
	l1 := acquire(c1, "a")
	write(c1, l1, "a", ModeExclusive, l1.Token(), WriteCommitted)
	if err := op.Delete(l1.Path(), -1); err != nil {
		t.Fatal(err)
	}
	l2 := acquire(c2, "a")
	write(c1, l1, "a", ModeExclusive, l1.Token(), WriteStale)
	write(c2, l2, "a", ModeExclusive, l2.Token(), WriteCommitted)
	write(c2, l2, "a/b c", ModeExclusive, l2.Token(), WriteCommitted) // a resource name that needs escaping
	// Readers, semaphore holders, AcquireAll parts and leaders are fenced
	// by their own nodes.
	lr := acquire(c1, "rw", zklock.Read)
	write(c1, lr, "rw", ModeRead, lr.Token(), WriteCommitted)
	ls := acquire(c1, "sem", zklock.Limit(2))
	write(c1, ls, "sem", ModeSemaphore, ls.Token(), WriteCommitted)
	la, err := c2.AcquireAll(ctx, []string{"all-a", "all-b"})
	if err != nil {
		t.Fatal(err)
	}
	toks := partTokens(la)
	write(c2, la, "all-a", ModeExclusive, toks["all-a"], WriteCommitted)
	write(c2, la, "all-b", ModeExclusive, toks["all-b"], WriteCommitted)
	le, err := c2.Campaign(ctx, "el", []byte("c2"))
	if err != nil {
		t.Fatal(err)
	}
	write(c2, le, "el", ModeExclusive, le.Token(), WriteCommitted)
	// No register: ZooKeeper refuses the store's own operations.
	write(c2, le, "none", ModeExclusive, le.Token(), WriteError)
	// A released semaphore lease writes no more.
	if err := ls.Release(ctx); err != nil {
		t.Fatal(err)
	}
	write(c1, ls, "sem", ModeSemaphore, ls.Token(), WriteStale)

	readBack := func() ([]Event, []string, error) { // one member: its log is the majority's
		rows, registers, problems, err := s.committedRows(op)
		rows, problems, diverged, err := quorumLog([]memberLog{{server: 1, rows: rows, registers: registers, problems: problems, err: err}})
		if len(diverged) > 0 {
			t.Fatalf("one member diverged from itself: %q", diverged)
		}
		return rows, problems, err
	}
	rows, problems, err := readBack()
	if err != nil || len(problems) > 0 {
		t.Fatalf("read back: %v %q", err, problems)
	}
	var got []string
	for _, r := range rows {
		if r.Kind != EvCommitted || r.Proc != 7 || r.Slot != 1 || r.WriteID != writeID(7, r.Op) || r.Sent != 1000+r.Op {
			t.Fatalf("row %+v", r)
		}
		got = append(got, strings.Join([]string{r.Resource, r.Mode, itoa(r.Order), itoa(r.Op)}, ":"))
	}
	want := []string{"a:x:1:1", "a:x:2:3", "a/b c:x:1:4", "all-a:x:1:7", "all-b:x:1:8", "el:x:1:9", "rw:r:1:5", "sem:sem:1:6"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if rows[1].Token != l2.Token() || rows[0].Token != l1.Token() {
		t.Fatalf("tokens %#x %#x, want %#x %#x", rows[0].Token, rows[1].Token, l1.Token(), l2.Token())
	}

	// A log that lost an entry, or a register written outside the log,
	// does not read back as whole.
	if err := op.Delete(logEntry(s.register("a"), 1), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Set(s.register("sem"), []byte(`{"proc":7,"op":6,"r":"sem","token":1,"wid":1}`), -1); err != nil {
		t.Fatal(err)
	}
	_, problems, err = readBack()
	if err != nil || len(problems) != 2 || problems[0] != "a: version 2 follows 0" || !strings.HasPrefix(problems[1], "sem: register at version 2 (token 0x1, write 1), log's last 1") {
		t.Fatalf("problems %q, err %v", problems, err)
	}
}
