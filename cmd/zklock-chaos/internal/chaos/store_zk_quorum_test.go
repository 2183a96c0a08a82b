package chaos

import (
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// The store's log is the majority's: a member that skipped transactions
// the others logged (zk1 in the long run of 28 November, 1,975 of them
// after a DIFF sync) or holds another write at an entry is ZooKeeper's,
// noted member by member, and its read-back leaves the log whole.
func TestQuorumLogIsTheMajoritys(t *testing.T) {
	row := func(res string, n, wid int64) Event {
		return Event{Kind: EvCommitted, Resource: res, Order: n, WriteID: wid, Token: 100 + wid}
	}
	full := func(server int) memberLog {
		var rows []Event
		for n := int64(1); n <= 6; n++ {
			rows = append(rows, row("a", n, n))
		}
		rows = append(rows, row("b", 1, 50))
		return memberLog{server: server, rows: rows, registers: map[string]storeRegister{
			"a": {N: 6, Token: 106, WriteID: 6}, "b": {N: 1, Token: 150, WriteID: 50}}}
	}
	ids := func(rows []Event) []int64 {
		var out []int64
		for _, r := range rows {
			out = append(out, r.WriteID)
		}
		return out
	}
	want := []int64{1, 2, 3, 4, 5, 6, 50}

	// all three agree: the log, nothing noted
	rows, problems, diverged, err := quorumLog([]memberLog{full(1), full(2), full(3)})
	if err != nil || len(problems) > 0 || len(diverged) > 0 || !slices.Equal(ids(rows), want) {
		t.Fatalf("agreeing members: rows %v problems %q diverged %q err %v", ids(rows), problems, diverged, err)
	}

	// zk1 lacks entries 2-4 of a and holds another write at 5, its
	// register behind; zk2 and zk3 hold the log
	zk1 := full(1)
	zk1.rows = slices.DeleteFunc(zk1.rows, func(r Event) bool { return r.Resource == "a" && r.Order >= 2 && r.Order <= 4 })
	zk1.rows[1].WriteID = 99 // entry 5
	zk1.registers["a"] = storeRegister{N: 3, Token: 106, WriteID: 6}
	rows, problems, diverged, err = quorumLog([]memberLog{zk1, full(2), full(3)})
	if err != nil || len(problems) > 0 || !slices.Equal(ids(rows), want) {
		t.Fatalf("zk1 behind: rows %v problems %q err %v", ids(rows), problems, err)
	}
	for _, w := range []string{
		"zk1's log of a lacks 3 entries the majority holds (2-4); holds another write than the majority's at 1 entries (5)",
		"zk1's register of a: version 3 (token 0x6a, write 0x6); the majority's: version 6 (token 0x6a, write 0x6)",
	} {
		if !slices.Contains(diverged, w) {
			t.Errorf("diverged %q lacks %q", diverged, w)
		}
	}
	if len(diverged) != 2 {
		t.Errorf("diverged %q, want zk1's two notes", diverged)
	}

	// the one member that logged entry 7 of a: not the log's
	zk3 := full(3)
	zk3.rows = append(zk3.rows[:6:6], row("a", 7, 7), zk3.rows[6])
	rows, _, diverged, _ = quorumLog([]memberLog{full(1), full(2), zk3})
	if !slices.Equal(ids(rows), want) || len(diverged) != 1 || !strings.HasPrefix(diverged[0], "zk3's log of a holds 1 entries the majority does not (7)") {
		t.Fatalf("zk3 ahead: rows %v diverged %q", ids(rows), diverged)
	}

	// a member the majority lacks a log entry of leaves a gap, which
	// wholeLog reports: a majority's loss is not a divergence
	gap := func(server int) memberLog {
		m := full(server)
		m.rows = slices.DeleteFunc(m.rows, func(r Event) bool { return r.Resource == "a" && r.Order == 3 })
		return m
	}
	_, problems, _, _ = quorumLog([]memberLog{gap(1), gap(2), full(3)})
	if !slices.Contains(problems, "a: version 4 follows 2") {
		t.Fatalf("a majority's gap: problems %q", problems)
	}

	// one member unread: the other two decide, and it is noted
	down := memberLog{server: 2, err: errors.New("connection refused")}
	rows, _, diverged, err = quorumLog([]memberLog{full(1), down, full(3)})
	if err != nil || !slices.Equal(ids(rows), want) || len(diverged) != 1 || !strings.Contains(diverged[0], "zk2: connection refused: not read") {
		t.Fatalf("zk2 down: rows %v diverged %q err %v", ids(rows), diverged, err)
	}
	// two unread: no majority, no log
	if _, _, _, err = quorumLog([]memberLog{full(1), down, {server: 3, err: errors.New("timeout")}}); err == nil || !strings.Contains(err.Error(), "1 of 3 members read") {
		t.Fatalf("two down: err %v", err)
	}
}

func TestSpans(t *testing.T) {
	for _, c := range []struct {
		at   []int64
		want string
	}{
		{[]int64{5}, "5"},
		{[]int64{4196, 4197, 4198, 4300}, "4196-4198, 4300"},
		{[]int64{1, 3, 5, 7, 9, 11, 13, 15, 17, 19}, "1, 3, 5, 7, 9, 11, 13, 15, …"},
	} {
		if got := spans(c.at); got != c.want {
			t.Errorf("spans(%v) = %q, want %q", c.at, got, c.want)
		}
	}
}

// A member that is down is not read, and the read-back does not wait for
// it past the bound (go-zookeeper, given one address, tries it for ever).
func TestDialMemberGivesUpOnAMemberThatIsDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	start := time.Now()
	conn, err := dialMember(addr, 300*time.Millisecond)
	if err == nil {
		conn.Close()
		t.Fatal("a session with a member that is down")
	}
	if took := time.Since(start); took > 3*time.Second || !strings.Contains(err.Error(), "no session with "+addr) {
		t.Fatalf("after %v: %v", took, err)
	}
}
