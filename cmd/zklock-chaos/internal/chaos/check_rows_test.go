package chaos_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/cmd/zklock-chaos/internal/chaos"
)

// dbParams judges histories of a campaign whose store was PostgreSQL.
var dbParams = func() chaos.Params { p := params; p.Store = chaos.StorePostgres; return p }()

func wid(proc int, n int64) int64 { return int64(proc)<<32 | n }

// dbWrite adds a writer's report of a write to a database store: sent and
// begun at t, answered at t+1.
func (h *history) dbWrite(proc int, op int64, r, mode string, token int64, t int, outcome string, n int64) *history {
	return h.add(chaos.Event{Kind: chaos.EvWrite, T: at(t + 1), Called: at(t), Sent: at(t), Proc: proc, Op: op, Resource: r, Mode: mode,
		Token: token, Accepted: outcome == chaos.WriteCommitted, Outcome: outcome, WriteID: wid(proc, n)})
}

// row adds a committed row, read back after the run: the n-th version of
// r, written by proc's write n.
func (h *history) row(proc int, op int64, r, mode string, token int64, sent int, n, version int64) *history {
	return h.add(chaos.Event{Kind: chaos.EvCommitted, T: at(9000), Proc: proc, Op: op, Resource: r, Mode: mode, Token: token,
		Sent: at(sent), WriteID: wid(proc, n), Order: version})
}

func (h *history) readBack() *history {
	return h.add(chaos.Event{Kind: chaos.EvNote, T: at(9001), Outcome: chaos.NoteStoreRead})
}

// overtaken is a holder (proc 1, token 10) paused before its first
// write, overtaken by proc 2 (token 20), which writes (the first row of
// r), and then sending its late write (outcome as its writer was told).
func overtaken(r, mode string, late string) *history {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: r, Mode: mode, Token: 10})
	h.add(chaos.Event{Kind: chaos.EvFault, T: at(10), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(3500), Proc: 2, Op: 1, Resource: r, Mode: chaos.ModeWrite, Token: 20})
	h.dbWrite(2, 1, r, chaos.ModeExclusive, 20, 3501, chaos.WriteCommitted, 1)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(3600), Proc: 2, Op: 1, Resource: r, Mode: chaos.ModeWrite})
	h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5000), FaultID: 1})
	if late != "" {
		h.dbWrite(1, 1, r, storeMode(mode), 10, 5001, late, 1)
	}
	h.add(chaos.Event{Kind: chaos.EvLost, T: at(5003), Proc: 1, Op: 1, Resource: r, Err: `zklock: lease on "a" lost: session_unverified`})
	return h.row(2, 1, r, chaos.ModeExclusive, 20, 3501, 1, 1)
}

// The database refused the paused holder's late write: no row of it, and
// no violation; the refusal is counted as fencing's.
func TestCheckDatabaseRefusedStaleWrite(t *testing.T) {
	r := chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteStale).readBack().evs, dbParams)
	wantViolations(t, r)
	if r.Stale.RejectedPaused != 1 || r.Stale.Committed != 0 || r.PausedOverlaps != 1 || r.Database == nil || r.Database.Rows != 1 ||
		r.Database.Outcomes[chaos.WriteStale] != 1 || r.Writes.Accepted != 1 {
		t.Fatalf("stale %+v, paused overlaps %d, database %+v, writes %+v", r.Stale, r.PausedOverlaps, r.Database, r.Writes)
	}
}

// A committed row from a stale token is the violation the campaign's
// database mode is there to find, whatever the writer was told: the rows
// decide.
func TestCheckDatabaseStaleWriteCommitted(t *testing.T) {
	r := chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteCommitted).row(1, 1, "a", chaos.ModeExclusive, 10, 5001, 1, 2).readBack().evs, dbParams)
	wantViolations(t, r, chaos.VStaleCommitted, chaos.VStoreHistory)
	if r.Stale.Committed != 1 || r.Stale.Rejected != 0 {
		t.Fatalf("stale %+v", r.Stale)
	}

	// Told it was refused, yet its row is there: committed all the same.
	r = chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteStale).row(1, 1, "a", chaos.ModeExclusive, 10, 5001, 1, 2).readBack().evs, dbParams)
	wantViolations(t, r, chaos.VStoreMismatch, chaos.VStaleCommitted, chaos.VStoreHistory)
	if r.Stale.Committed != 1 || r.Stale.Rejected != 0 || r.Database.Mismatches != 1 {
		t.Fatalf("stale %+v, database %+v", r.Stale, r.Database)
	}

	// Its writer killed before it could report: the row alone counts.
	r = chaos.Check(overtaken("a", chaos.ModeExclusive, "").row(1, 1, "a", chaos.ModeExclusive, 10, 5001, 1, 2).readBack().evs, dbParams)
	wantViolations(t, r, chaos.VStaleCommitted, chaos.VStoreHistory)
	if r.Database.Outcomes[chaos.WriteUnreported] != 1 {
		t.Fatalf("database %+v", r.Database)
	}
}

// Told it committed, with no row: not accepted, and the store is not what
// the checker relies on.
func TestCheckDatabaseCommitWithoutRow(t *testing.T) {
	r := chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteCommitted).readBack().evs, dbParams)
	wantViolations(t, r, chaos.VStoreMismatch)
	if r.Writes.Accepted != 1 || r.Stale.Committed != 0 || r.Stale.Rejected != 0 {
		t.Fatalf("writes %+v, stale %+v", r.Writes, r.Stale)
	}
}

// In the ZooKeeper store the writer learns its log entry from the answer
// (EvWrite's Order): a write told it committed, with no row, whose entry
// holds another write was forgotten by the ensemble, which gave the
// entry's number again: ZooKeeper's verdict (store-divergence), not a
// mismatch of zklock's, and the run does not fail on it. The long run of
// 28 November on d311237 had four, each proven in the members' own
// transaction logs (rw-1's entry 387: created by op 277's multi, zxid
// 0x60000003b, on all three members; read back holding op 269's write,
// which no member's log holds). An entry the log does not have at all
// says nothing of whose fault it is: that stays store-mismatch.
func TestCheckCommitWithoutRowNamesItsEntry(t *testing.T) {
	run := func(order int64) *chaos.Report {
		h := overtaken("a", chaos.ModeExclusive, chaos.WriteCommitted).readBack()
		for i := range h.evs {
			if e := &h.evs[i]; e.Kind == chaos.EvWrite && e.Proc == 1 {
				e.Order = order
			}
		}
		return chaos.Check(h.evs, dbParams)
	}
	r := run(1) // the entry proc 2's write holds
	wantViolations(t, r, chaos.VStoreDiverged)
	want := "(ZooKeeper's answer named log entry 1, which holds write 0x200000001 of proc 2 op 1: the ensemble gave its number again)"
	if d := r.Violations[0].Detail; !strings.Contains(d, want) {
		t.Fatalf("detail lacks %q: %s", want, d)
	}
	if !r.Pass || r.ZooKeeperVerdicts != 1 || r.Database.Forgotten != 1 || r.Database.Mismatches != 0 {
		t.Fatalf("pass %t, ZooKeeper's verdicts %d, database %+v", r.Pass, r.ZooKeeperVerdicts, r.Database)
	}
	r = run(7) // an entry the log does not have
	wantViolations(t, r, chaos.VStoreMismatch)
	if d := r.Violations[0].Detail; !strings.Contains(d, "named log entry 7, which the log read back does not have") || r.Pass {
		t.Fatalf("pass %t: %s", r.Pass, d)
	}
}

// A member whose read-back differs from the majority's (quorumLog's note)
// is ZooKeeper's verdict, and does not fail the run.
func TestCheckStoreDivergedNoteIsZooKeepers(t *testing.T) {
	h := overtaken("a", chaos.ModeExclusive, chaos.WriteCommitted)
	h.row(1, 1, "a", chaos.ModeExclusive, 10, 1, 1, 1)
	h.add(chaos.Event{Kind: chaos.EvNote, T: h.evs[len(h.evs)-1].T, Outcome: chaos.NoteStoreDiverged,
		Detail: "zk1's log of a lacks 8 entries the majority holds (4196-4203)"})
	r := chaos.Check(h.readBack().evs, dbParams)
	i := slices.IndexFunc(r.Violations, func(v chaos.Violation) bool { return v.Kind == chaos.VStoreDiverged })
	if i < 0 || !strings.Contains(r.Violations[i].Detail, "zk1's log of a lacks 8 entries") || r.Database.Diverged != 1 {
		t.Fatalf("violations %+v, database %+v", r.Violations, r.Database)
	}
	if r.ZooKeeperVerdicts != 1 {
		t.Fatalf("ZooKeeper's verdicts %d, want 1", r.ZooKeeperVerdicts)
	}
}

// The store's order is the rows': two holders one after the other, whose
// writes the database committed in the other order, let a stale write
// through; the same reports with the store in memory are fine.
func TestCheckDatabaseOrderIsTheRows(t *testing.T) {
	h := &history{}
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "a", Token: 10})
	h.dbWrite(1, 1, "a", chaos.ModeExclusive, 10, 1, chaos.WriteCommitted, 1)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(50), Proc: 1, Op: 1, Resource: "a"})
	h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(60), Proc: 2, Op: 1, Resource: "a", Token: 20})
	h.dbWrite(2, 1, "a", chaos.ModeExclusive, 20, 61, chaos.WriteCommitted, 1)
	h.add(chaos.Event{Kind: chaos.EvRelease, T: at(90), Proc: 2, Op: 1, Resource: "a"})
	inMemory := append([]chaos.Event(nil), h.evs...)
	inMemory[4].Max = 10 // the store in memory says what it held before
	wantViolations(t, chaos.Check(inMemory, params))

	// (The verdicts alone, each in its writer's interval, fit a fenced
	// register: only the rows' order shows the stale write.)
	h.row(2, 1, "a", chaos.ModeExclusive, 20, 61, 1, 1).row(1, 1, "a", chaos.ModeExclusive, 10, 1, 1, 2).readBack()
	r := chaos.Check(h.evs, dbParams)
	wantViolations(t, r, chaos.VStaleCommitted)

	// In the rows' order, as the database committed them: fine.
	h.evs = h.evs[:len(inMemory)]
	h.row(1, 1, "a", chaos.ModeExclusive, 10, 1, 1, 1).row(2, 1, "a", chaos.ModeExclusive, 20, 61, 1, 2).readBack()
	wantViolations(t, chaos.Check(h.evs, dbParams))
}

// Readers are not fenced in a database (package fence refuses read
// leases): a paused reader's late write commits, and is counted as one no
// token can fence. The store in memory fences readers: there the same
// accepted write is a stale one.
func TestCheckDatabaseReaderUnfenced(t *testing.T) {
	h := overtaken("rw-0", chaos.ModeRead, chaos.WriteCommitted).row(1, 1, "rw-0", chaos.ModeRead, 10, 5001, 1, 2).readBack()
	r := chaos.Check(h.evs, dbParams)
	wantViolations(t, r)
	if r.Stale.Unfenced != 1 || r.Stale.Committed != 0 {
		t.Fatalf("stale %+v", r.Stale)
	}
	r = chaos.Check(h.evs, params)
	wantViolations(t, r, chaos.VStaleCommitted, chaos.VStoreHistory)
}

// Without the rows read back, nothing can be judged; a write the database
// failed for no reason a fault explains is a violation of its own.
func TestCheckDatabaseUnreadAndErrors(t *testing.T) {
	wantViolations(t, chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteStale).evs, dbParams), chaos.VStoreMismatch)
	r := chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteError).readBack().evs, dbParams)
	wantViolations(t, r, chaos.VStoreError)
	r = chaos.Check(overtaken("a", chaos.ModeExclusive, chaos.WriteAborted).readBack().evs, dbParams)
	wantViolations(t, r)
	if r.Database.PausedAborted != 0 || r.Stale.Rejected != 0 {
		t.Fatalf("database %+v, stale %+v", r.Database, r.Stale)
	}
}

// A Downgrade's read lease whose holder was paused just after it (its
// session expired meanwhile), and a writer that came in during the pause:
// the reader's late write, committed (a database fences no reader) before
// it was told of its loss, is one no token can fence, not a writer let in
// between the downgrade's two leases (the short campaign of 29 November
// on 9dbe11f, PostgreSQL store, seed 1795950713748787613: proc 7 stopped
// 0.1 ms after its downgrade, for 4.8 s). The same history without the
// pause and the loss is a gap.
func TestCheckDatabaseDowngradePausedReader(t *testing.T) {
	run := func(paused bool) *chaos.Report {
		h := &history{}
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(0), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Token: 10, Detail: "downgrade"})
		h.dbWrite(1, 1, "rw-0", chaos.ModeExclusive, 10, 1, chaos.WriteCommitted, 1)
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(50), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Detail: "downgrade"})
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(60), Began: at(50), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade,
			Token: 11, From: 1, Detail: "downgrade"})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(61), Proc: 1, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Outcome: "downgraded"})
		if paused {
			h.add(chaos.Event{Kind: chaos.EvFault, T: at(62), Fault: string(chaos.FaultPause), FaultID: 1, Proc: 1})
		}
		h.add(chaos.Event{Kind: chaos.EvAcquired, T: at(3500), Proc: 2, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Token: 20})
		h.dbWrite(2, 1, "rw-0", chaos.ModeExclusive, 20, 3501, chaos.WriteCommitted, 1)
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(3600), Proc: 2, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(3601), Proc: 2, Op: 1, Resource: "rw-0", Mode: chaos.ModeWrite, Outcome: "ok"})
		if paused {
			h.add(chaos.Event{Kind: chaos.EvHeal, T: at(5000), FaultID: 1})
		}
		h.dbWrite(1, 2, "rw-0", chaos.ModeRead, 11, 5001, chaos.WriteCommitted, 2)
		outcome := "ok"
		if paused {
			h.add(chaos.Event{Kind: chaos.EvLost, T: at(5003), Proc: 1, Op: 2, Resource: "rw-0", Err: `zklock: lease on "rw-0" lost: session_unverified`})
			outcome = "lost"
		}
		h.add(chaos.Event{Kind: chaos.EvRelease, T: at(5010), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade})
		h.add(chaos.Event{Kind: chaos.EvReleased, T: at(5011), Proc: 1, Op: 2, Resource: "rw-0", Mode: chaos.ModeDowngrade, Outcome: outcome})
		h.row(1, 1, "rw-0", chaos.ModeExclusive, 10, 1, 1, 1).row(2, 1, "rw-0", chaos.ModeExclusive, 20, 3501, 1, 2).
			row(1, 2, "rw-0", chaos.ModeRead, 11, 5001, 2, 3).readBack()
		return chaos.Check(h.evs, dbParams)
	}
	r := run(true)
	wantViolations(t, r)
	if r.Downgrades != 1 || r.Stale.Unfenced != 1 {
		t.Fatalf("downgrades %d, stale %+v", r.Downgrades, r.Stale)
	}
	wantViolations(t, run(false), chaos.VDoubleGrant, chaos.VDowngradeGap)
}
