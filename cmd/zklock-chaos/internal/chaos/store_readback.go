package chaos

import (
	"fmt"
)

// Notes the campaign records about a store outside its own process (a
// database, or ZooKeeper), after every worker has stopped (EvNote's
// Outcome).
const (
	NoteStoreRead         = "store-read"         // the committed writes were read back (Detail: how many); EvCommitted events precede it
	NoteStoreUnread       = "store-unread"       // they could not be (Err): the checker cannot judge the writes
	NoteStoreInconsistent = "store-inconsistent" // the log contradicts itself (Detail): a resource's versions are not 1..n, or its register is not its last version
)

// storeRegister is a resource's register as read back: its version n (the
// number of writes committed to it) and the write it holds, the last one.
type storeRegister struct {
	N, Token, WriteID int64
}

// wholeLog checks that a store's log, read back as EvCommitted rows (each
// resource's together, in the order of their versions, Order), is whole
// against the registers: each resource's versions run 1..n without a gap
// or a repeat, and its register is at version n and holds that write. A
// register at version 0 with no rows is a resource nobody wrote. It
// returns what contradicts that, resource by resource.
func wholeLog(rows []Event, registers map[string]storeRegister) (problems []string) {
	last := map[string]Event{}
	for _, e := range rows {
		if prev, ok := last[e.Resource]; (ok && e.Order != prev.Order+1) || (!ok && e.Order != 1) {
			problems = append(problems, fmt.Sprintf("%s: version %d follows %d", e.Resource, e.Order, prev.Order))
		}
		last[e.Resource] = e
	}
	for _, res := range slicesSorted(registers) {
		g := registers[res]
		l, ok := last[res]
		if !ok && g.N == 0 {
			continue
		}
		if !ok || l.Order != g.N || l.Token != g.Token || l.WriteID != g.WriteID {
			problems = append(problems, fmt.Sprintf("%s: register at version %d (token %#x, write %d), log's last %d (token %#x, write %d)",
				res, g.N, g.Token, g.WriteID, l.Order, l.Token, l.WriteID))
		}
	}
	for _, res := range slicesSorted(last) {
		if _, ok := registers[res]; !ok {
			problems = append(problems, fmt.Sprintf("%s: logged writes, no register row", res))
		}
	}
	return problems
}

// recordReadBack records what a store's read-back found: every committed
// write (EvCommitted), what contradicts itself in them
// (NoteStoreInconsistent), then NoteStoreRead; or, when err is set,
// NoteStoreUnread.
func recordReadBack(h *hub, kind string, rows []Event, problems []string, err error) {
	if err != nil {
		h.record(Event{Kind: EvNote, Outcome: NoteStoreUnread, Err: err.Error()})
		return
	}
	for _, r := range rows {
		h.record(r)
	}
	for _, p := range problems {
		h.record(Event{Kind: EvNote, Outcome: NoteStoreInconsistent, Detail: p})
	}
	h.record(Event{Kind: EvNote, Outcome: NoteStoreRead, Detail: fmt.Sprintf("%d rows from %s", len(rows), kind)})
}
