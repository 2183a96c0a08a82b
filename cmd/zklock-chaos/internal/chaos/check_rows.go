package chaos

import (
	"cmp"
	"fmt"
	"slices"
)

// storeWrite is a write as the checker judges it: whether the store
// accepted it, and where in the store's order.
type storeWrite struct {
	Event       // EvWrite; Accepted is the store's (in a database: its row committed)
	pos   int64 // its place in the store's order, for accepted writes: the history's Seq in memory, a rank by resource and commit order in a database
}

// refused reports whether the store's fence refused the write: in memory,
// any write not accepted; in a database, one fence.Guard refused; in
// ZooKeeper, one whose lease's node was gone (a write the store failed for
// another reason was neither accepted nor refused).
func (w storeWrite) refused() bool {
	return !w.Accepted && (w.Outcome == "" || w.Outcome == WriteStale)
}

// storeWrites returns the store's writes: the accepted ones in the
// store's order, then the others in the history's.
//
// In memory, the hub's verdicts are the store's, and the history's order
// (Seq) is the store's order.
//
// In a database or ZooKeeper, the committed rows (EvCommitted, read back
// after the run) decide: a write is accepted if and only if its row
// committed, and the accepted writes of a resource are in the order of
// their rows' versions (the register row's lock serialized them, or, in
// ZooKeeper, the register znode's version and its log's sequence numbers,
// whether or not the fence did). A row whose writer never reported (killed after its commit)
// is accepted all the same. The writers' reports give the times; where
// they contradict the rows (a write told it committed with no row, a
// write the fence refused with one) the store is not what the checker
// relies on: VStoreMismatch.
func (c *checker) storeWrites() []storeWrite {
	var acc, other []storeWrite
	if !c.db {
		for _, e := range c.evs {
			if e.Kind != EvWrite {
				continue
			}
			if e.Accepted {
				acc = append(acc, storeWrite{Event: e, pos: e.Seq})
			} else {
				other = append(other, storeWrite{Event: e})
			}
		}
		return append(acc, other...)
	}
	d := c.rep.database()
	d.Store = c.p.Store
	rows := map[int64]Event{}
	var order []int64 // the rows' write ids, in the history's order
	read := false
	for _, e := range c.evs {
		switch {
		case e.Kind == EvCommitted:
			if _, dup := rows[e.WriteID]; !dup {
				order = append(order, e.WriteID)
			}
			rows[e.WriteID] = e
		case e.Kind == EvNote && e.Outcome == NoteStoreRead:
			read = true
		case e.Kind == EvNote && e.Outcome == NoteStoreUnread:
			c.violation(VStoreMismatch, "", "the store's committed rows could not be read back: "+e.Err, e.T, e.T)
		case e.Kind == EvNote && e.Outcome == NoteStoreInconsistent:
			c.violation(VStoreMismatch, "", "the store's rows contradict themselves: "+e.Detail, e.T, e.T)
		case e.Kind == EvNote && e.Outcome == NoteStoreDiverged:
			d.Diverged++
			c.violation(VStoreDiverged, "", "the members' read-backs of the store differ (a ZooKeeper fault): "+e.Detail, e.T, e.T)
		}
	}
	if !read {
		c.violation(VStoreMismatch, "", "the history has no read-back of the store's committed rows: what was accepted is unknown", c.lastT, c.lastT)
	}
	d.Rows = len(rows)
	reported := map[int64]bool{}
	for _, e := range c.evs {
		if e.Kind != EvWrite {
			continue
		}
		d.Outcomes[e.Outcome]++
		row, ok := rows[e.WriteID]
		if e.WriteID == 0 {
			ok = false
		}
		switch {
		case ok && (row.Resource != e.Resource || row.Token != e.Token || row.Proc != e.Proc || row.Op != e.Op):
			c.mismatch(e, fmt.Sprintf("write %#x of %s (token %#x) committed as a row of proc %d op %d on %s (token %#x)",
				e.WriteID, leaseKey{e.Proc, e.Op, e.Resource}, e.Token, row.Proc, row.Op, row.Resource, row.Token))
		case ok && e.Outcome == WriteStale:
			c.mismatch(e, fmt.Sprintf("the fence refused write %#x of %s (token %#x), yet its row committed", e.WriteID, leaseKey{e.Proc, e.Op, e.Resource}, e.Token))
		case !ok && e.Outcome == WriteCommitted:
			holder, again := c.entryHolder(e)
			detail := fmt.Sprintf("write %#x of %s (token %#x) was told it committed, and no row of it is in the store%s", e.WriteID, leaseKey{e.Proc, e.Op, e.Resource}, e.Token, holder)
			if again {
				// ZooKeeper's answer named the entry its create made,
				// and the ensemble's log holds another write there:
				// it forgot a transaction it had acknowledged.
				d.Forgotten++
				c.violation(VStoreDiverged, e.Resource, detail, e.Called, e.T, leaseKey{e.Proc, e.Op, e.Resource})
				break
			}
			c.mismatch(e, detail)
		case !ok && e.Outcome == WriteError:
			c.violation(VStoreError, e.Resource, fmt.Sprintf("write %#x of %s (token %#x) failed: %s", e.WriteID, leaseKey{e.Proc, e.Op, e.Resource}, e.Token, e.Err),
				e.Called, e.T, leaseKey{e.Proc, e.Op, e.Resource})
		}
		if e.Outcome == WriteAborted && c.pausedDuring(e.Proc, e.Called, e.T) {
			d.PausedAborted++
		}
		e.Accepted = ok
		if !ok {
			other = append(other, storeWrite{Event: e})
			continue
		}
		reported[e.WriteID] = true
		acc = append(acc, storeWrite{Event: e, pos: row.Order})
	}
	for _, id := range order {
		if reported[id] {
			continue
		}
		row := rows[id]
		end, ok := c.died[row.Proc]
		if !ok {
			end = c.lastT
		}
		d.Outcomes[WriteUnreported]++
		acc = append(acc, storeWrite{Event: Event{Kind: EvWrite, T: end, Called: row.Sent, Sent: row.Sent, Proc: row.Proc, Slot: row.Slot, Op: row.Op,
			Resource: row.Resource, Mode: row.Mode, Token: row.Token, WriteID: id, Accepted: true, Outcome: WriteUnreported}, pos: row.Order})
	}
	slices.SortStableFunc(acc, func(a, b storeWrite) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.pos, b.pos))
	})
	for i := range acc {
		acc[i].pos = int64(i + 1)
	}
	return append(acc, other...)
}

func (c *checker) mismatch(e Event, detail string) {
	c.rep.database().Mismatches++
	c.violation(VStoreMismatch, e.Resource, detail, e.Called, e.T, leaseKey{e.Proc, e.Op, e.Resource})
}

// checkStaleCommitted verifies, per resource in the store's order, that
// no fenced write was accepted out of token order: the one thing a fence
// exists to refuse. A writer (exclusive, write, leader, AcquireAll part)
// is fenced by the writers before it. Where readers are ordered too (in
// memory, and in ZooKeeper: zkFenceSpec), a reader is fenced by the
// writers before it (at or below a writer's token) and a writer by the
// readers before it (below a reader's token); in a database they are not
// (package fence refuses read leases: several hold at once) and
// checkSharedWrites judges them.
func (c *checker) checkStaleCommitted() {
	ordered := !c.db || c.zk
	top := map[string]storeWrite{}    // the accepted writer with the largest token so far
	topAll := map[string]storeWrite{} // the accepted writer or reader with the largest token so far
	for _, w := range c.writes {
		if !w.Accepted {
			break
		}
		mode := storeModeOf(w.Mode)
		t, seen := top[w.Resource]
		a, seenAll := topAll[w.Resource]
		over, stale := t, true
		switch {
		case fenced(mode) && seen && w.Token < t.Token:
		case fenced(mode) && ordered && seenAll && w.Token < a.Token:
			over = a
		case mode == ModeRead && ordered && seen && w.Token <= t.Token:
		default:
			stale = false
		}
		if stale {
			c.rep.Stale.Committed++
			k, tk := leaseKey{w.Proc, w.Op, w.Resource}, leaseKey{over.Proc, over.Op, over.Resource}
			c.violation(VStaleCommitted, w.Resource, fmt.Sprintf("%v (token %#x) had a write accepted after %v (token %#x) had: a stale write got through the fence",
				k, w.Token, tk, over.Token), min(over.T, w.T), max(over.T, w.T), k, tk)
			continue
		}
		if fenced(mode) && (!seen || w.Token > t.Token) {
			top[w.Resource] = w
		}
		if (fenced(mode) || mode == ModeRead) && (!seenAll || w.Token > a.Token) {
			topAll[w.Resource] = w
		}
	}
}

// DBStats is what became of the writes to a store outside the campaign
// process: a database, or ZooKeeper.
type DBStats struct {
	Store string `json:"store"`
	// Rows is the number of committed rows read back: the accepted writes.
	Rows int `json:"rows"`
	// Outcomes counts the writes by what their writer was told
	// (WriteCommitted, WriteStale, WriteAborted, ...), and the rows no
	// writer reported (WriteUnreported).
	Outcomes map[string]int `json:"outcomes"`
	// PausedAborted counts transactions the database ended while their
	// writer was stopped inside them (idle in transaction past its
	// timeout: the writer, paused, held the resource's rows); in
	// ZooKeeper, writes whose answer was lost while their writer was
	// stopped (its connection closed, or its session expired).
	PausedAborted int `json:"paused_aborted"`
	// Mismatches counts writes whose report and row disagree.
	Mismatches int `json:"mismatches"`
	// Forgotten counts, in the ZooKeeper store, writes told committed
	// whose log entry (the one ZooKeeper's answer named) holds another
	// write; Diverged the notes of members whose read-back differs from
	// the majority's (NoteStoreDiverged). ZooKeeper's, both.
	Forgotten int `json:"forgotten,omitempty"`
	Diverged  int `json:"diverged,omitempty"`
}

func (r *Report) database() *DBStats {
	if r.Database == nil {
		r.Database = &DBStats{Outcomes: map[string]int{}}
	}
	return r.Database
}

// entryHolder says, for a write told it committed whose row is missing,
// what the log entry ZooKeeper's answer named holds (EvWrite's Order, in
// the ZooKeeper store): another write there means the ensemble gave the
// entry's number again, forgetting a transaction it had acknowledged.
func (c *checker) entryHolder(w Event) (detail string, again bool) {
	if w.Order == 0 {
		return "", false
	}
	for _, e := range c.evs {
		if e.Kind == EvCommitted && e.Resource == w.Resource && e.Order == w.Order {
			return fmt.Sprintf(" (ZooKeeper's answer named log entry %d, which holds write %#x of %s: the ensemble gave its number again)",
				w.Order, e.WriteID, leaseKey{e.Proc, e.Op, e.Resource}), true
		}
	}
	return fmt.Sprintf(" (ZooKeeper's answer named log entry %d, which the log read back does not have)", w.Order), false
}
