package chaos

import (
	"context"
	"fmt"
)

// committedRows reads back every committed write, resource by resource in
// commit order (the register's version n), as EvCommitted events, and
// returns what wholeLog finds wrong in them against the register rows.
func (s *sqlStore) committedRows(ctx context.Context) (rows []Event, problems []string, err error) {
	rs, err := s.db.QueryContext(ctx, "SELECT wid, resource, n, token, mode, proc, slot, op, sent FROM "+logTable+" ORDER BY resource, n")
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		e := Event{Kind: EvCommitted}
		if err := rs.Scan(&e.WriteID, &e.Resource, &e.Order, &e.Token, &e.Mode, &e.Proc, &e.Slot, &e.Op, &e.Sent); err != nil {
			return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
		}
		rows = append(rows, e)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's rows: %w", err)
	}
	reg, err := s.db.QueryContext(ctx, "SELECT resource, n, token, wid FROM "+registerTable)
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
	}
	defer reg.Close()
	registers := map[string]storeRegister{}
	for reg.Next() {
		var res string
		var g storeRegister
		if err := reg.Scan(&res, &g.N, &g.Token, &g.WriteID); err != nil {
			return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
		}
		registers[res] = g
	}
	if err := reg.Err(); err != nil {
		return nil, nil, fmt.Errorf("chaos: reading the store's register: %w", err)
	}
	return rows, wholeLog(rows, registers), nil
}
