package chaos

import (
	"context"
	"fmt"
)

// Notes the campaign records about a store in a database (EvNote's
// Outcome), after every worker has stopped.
const (
	NoteStoreRead         = "store-read"         // the committed rows were read back (Detail: how many); EvCommitted events precede it
	NoteStoreUnread       = "store-unread"       // they could not be (Err): the checker cannot judge the writes
	NoteStoreInconsistent = "store-inconsistent" // the rows contradict themselves (Detail): a resource's versions are not 1..n, or its register is not its last version
)

// committedRows reads back every committed write, resource by resource in
// commit order (the register's version n), as EvCommitted events, and
// checks that the log is whole: each resource's versions run 1..n without
// a gap or a repeat, and its register row holds its last one. What
// contradicts that is returned as problems.
func (s *sqlStore) committedRows(ctx context.Context) (rows []Event, problems []string, err error) {
	rs, err := s.db.QueryContext(ctx, "SELECT wid, resource, n, token, mode, proc, slot, op, sent FROM "+logTable+" ORDER BY resource, n")
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
	}
	defer rs.Close()
	last := map[string]Event{}
	for rs.Next() {
		var e Event
		if err := rs.Scan(&e.WriteID, &e.Resource, &e.Order, &e.Token, &e.Mode, &e.Proc, &e.Slot, &e.Op, &e.Sent); err != nil {
			return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
		}
		e.Kind = EvCommitted
		if prev, ok := last[e.Resource]; (ok && e.Order != prev.Order+1) || (!ok && e.Order != 1) {
			problems = append(problems, fmt.Sprintf("%s: version %d follows %d", e.Resource, e.Order, prev.Order))
		}
		last[e.Resource] = e
		rows = append(rows, e)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
	}
	reg, err := s.db.QueryContext(ctx, "SELECT resource, n, token, wid FROM "+registerTable+" ORDER BY resource")
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
	}
	defer reg.Close()
	seen := map[string]bool{}
	for reg.Next() {
		var res string
		var n, tok, wid int64
		if err := reg.Scan(&res, &n, &tok, &wid); err != nil {
			return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
		}
		seen[res] = true
		if l, ok := last[res]; !ok || l.Order != n || l.Token != tok || l.WriteID != wid {
			problems = append(problems, fmt.Sprintf("%s: register at version %d (token %#x, write %d), log's last %d (token %#x, write %d)",
				res, n, tok, wid, l.Order, l.Token, l.WriteID))
		}
	}
	if err := reg.Err(); err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
	}
	for _, res := range slicesSorted(last) {
		if !seen[res] {
			problems = append(problems, fmt.Sprintf("%s: logged writes, no register row", res))
		}
	}
	return rows, problems, nil
}
