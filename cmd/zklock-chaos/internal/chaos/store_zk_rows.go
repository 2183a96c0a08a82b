package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zklock"
)

// zkReadConcurrency bounds the reads a read-back has in flight at once.
const zkReadConcurrency = 16

// readBack records every committed write of the store (EvCommitted), what
// contradicts itself in them (NoteStoreInconsistent), then NoteStoreRead;
// or NoteStoreUnread. Call it once nothing writes any more.
//
// It reads each member of the ensemble (addrs, one address per member)
// through a connection of its own, after a sync, and records the log a
// majority of them hold (quorumLog): a member can hold a state no run of
// committed transactions gives, and a sync does not mend it. The long run
// of 28 November (ZooKeeper store, seed 1795880989503723340) read back
// from zk1 alone, whose transaction log skipped 1,975 transactions that
// zk2 and zk3 both logged (ZooKeeper 3.8.0 after a DIFF sync), and failed
// on 726 acknowledged writes "not in the store". Where a member differs
// from the majority, the campaign records NoteStoreDiverged: ZooKeeper's.
func (s zkStore) readBack(addrs []string, h *hub) {
	views := make([]memberLog, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { views[i] = s.readMember(i+1, addr) })
	}
	wg.Wait()
	rows, problems, diverged, err := quorumLog(views)
	for _, d := range diverged {
		h.record(Event{Kind: EvNote, Outcome: NoteStoreDiverged, Detail: d})
	}
	recordReadBack(h, StoreZK, rows, problems, err)
}

// memberLog is one member's read-back: its rows, registers and the
// problems its log shows on its own (entries not where their number
// says), or the error that ended the read.
type memberLog struct {
	server    int // zk<server>
	rows      []Event
	registers map[string]storeRegister
	problems  []string
	err       error
}

// readMember reads the store from the member at addr, and starts again
// (three times at most) when the connection is lost under it.
func (s zkStore) readMember(server int, addr string) memberLog {
	m := memberLog{server: server}
	conn, err := dialMember(addr, memberDialTimeout)
	if err != nil {
		m.err = err
		return m
	}
	defer conn.Close()
	for attempt := 1; ; attempt++ {
		m.rows, m.registers, m.problems, m.err = s.committedRows(conn)
		if m.err == nil || attempt == 3 || !(errors.Is(m.err, zk.ErrConnectionClosed) || errors.Is(m.err, zk.ErrNoServer)) {
			return m
		}
		time.Sleep(time.Second)
	}
}

// memberDialTimeout bounds the wait for a session with one member: a
// member that is down is not read (go-zookeeper, given one address, would
// try it for ever, and hold every request meanwhile).
const memberDialTimeout = 30 * time.Second

// dialMember connects to the one member at addr, and waits until it has a
// session, at most timeout.
func dialMember(addr string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quietLogger{}))
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
		case <-t.C:
			conn.Close()
			return nil, fmt.Errorf("chaos: no session with %s within %v", addr, timeout)
		}
	}
}

// committedRows reads back every committed write the member conn is
// connected to holds, register by register, each in its log's order, as
// EvCommitted events (Order n for the log's n-th entry), the registers
// (the register's version is its n), and any log entry that is not a
// write of its resource, or not where its number says. (quorumLog checks
// the log whole, wholeLog.)
//
// The entries are read by name, w-<n-1> for n from 1 to the register's
// version (or its number of children, if larger), not listed: a long
// campaign logs tens of thousands of writes to one resource, and a
// listing of them in one answer would come near go-zookeeper's limit of
// 1.5 MB. A missing entry is a gap in the rows, which wholeLog reports.
func (s zkStore) committedRows(conn *zk.Conn) (rows []Event, registers map[string]storeRegister, problems []string, err error) {
	// A server that was cut off or restarted catches up with the leader
	// before it answers.
	if _, err := conn.Sync(s.root); err != nil {
		return nil, nil, nil, fmt.Errorf("chaos: reading the zookeeper store: %w", err)
	}
	names, _, err := conn.Children(s.root)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("chaos: reading the zookeeper store: %w", err)
	}
	slices.Sort(names)
	registers = map[string]storeRegister{}
	for _, name := range names {
		res, ok := zklock.UnescapeResource(name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: not a register's name", name))
			continue
		}
		reg := s.root + "/" + name
		data, st, err := conn.Get(reg)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("chaos: reading the zookeeper store's register %s: %w", reg, err)
		}
		var last writeRequest
		if len(data) > 0 && json.Unmarshal(data, &last) != nil {
			problems = append(problems, fmt.Sprintf("%s: the register holds no write: %q", res, data))
		}
		registers[res] = storeRegister{N: int64(st.Version), Token: last.Token, WriteID: last.ID}
		entries, err := readLog(conn, reg, int64(max(st.Version, st.NumChildren)))
		if err != nil {
			return nil, nil, nil, err
		}
		found := 0
		for i, data := range entries {
			if data == nil {
				continue
			}
			found++
			var w writeRequest
			if err := json.Unmarshal(data, &w); err != nil || w.Resource != res {
				problems = append(problems, fmt.Sprintf("%s: log entry %d is not a write of it: %q", res, i+1, data))
				continue
			}
			rows = append(rows, Event{Kind: EvCommitted, WriteID: w.ID, Resource: res, Order: int64(i + 1), Token: w.Token, Mode: w.Mode,
				Proc: w.Proc, Slot: w.Slot, Op: w.Op, Sent: w.Sent})
		}
		if found != int(st.NumChildren) {
			problems = append(problems, fmt.Sprintf("%s: %d log entries, %d of them named w-0 to w-%d", res, st.NumChildren, found, len(entries)-1))
		}
	}
	return rows, registers, problems, nil
}

// readLog reads the first n entries of the log under reg, at most
// zkReadConcurrency at once: entry i is the data of the (i+1)-th write,
// nil when there is no such node.
func readLog(conn *zk.Conn, reg string, n int64) ([][]byte, error) {
	entries := make([][]byte, n)
	errs := make([]error, n)
	slots := make(chan struct{}, zkReadConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			data, _, err := conn.Get(logEntry(reg, i+1))
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case err != nil:
				errs[i] = fmt.Errorf("chaos: reading the zookeeper store's log entry %s: %w", logEntry(reg, i+1), err)
			default:
				entries[i] = append([]byte{}, data...) // not nil, even if empty
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first: after a lost connection, every later one says the same
		}
	}
	return entries, nil
}
