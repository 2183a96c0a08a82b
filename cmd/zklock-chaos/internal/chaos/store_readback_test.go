package chaos

import (
	"errors"
	"slices"
	"testing"
)

// logRow is the n-th committed write of res, with token tok, as read back.
func logRow(res string, n, tok int64) Event {
	return Event{Kind: EvCommitted, Resource: res, Order: n, Token: tok, WriteID: writeID(1, tok)}
}

// A log is whole when each resource's versions run 1..n and its register
// holds the n-th write; a gap, a repeat, a register behind or ahead of its
// log, or a log with no register is not.
func TestWholeLog(t *testing.T) {
	reg := func(n, tok int64) storeRegister { return storeRegister{N: n, Token: tok, WriteID: writeID(1, tok)} }
	for _, c := range []struct {
		name string
		rows []Event
		regs map[string]storeRegister
		want []string
	}{
		{"whole", []Event{logRow("a", 1, 10), logRow("a", 2, 11), logRow("b", 1, 20)},
			map[string]storeRegister{"a": reg(2, 11), "b": reg(1, 20), "c": {}}, nil},
		{"gap", []Event{logRow("a", 1, 10), logRow("a", 3, 12)},
			map[string]storeRegister{"a": reg(3, 12)}, []string{"a: version 3 follows 1"}},
		{"repeat", []Event{logRow("a", 1, 10), logRow("a", 1, 11)},
			map[string]storeRegister{"a": reg(1, 11)}, []string{"a: version 1 follows 1"}},
		{"first missing", []Event{logRow("a", 2, 10)},
			map[string]storeRegister{"a": reg(2, 10)}, []string{"a: version 2 follows 0"}},
		{"register ahead", []Event{logRow("a", 1, 10)},
			map[string]storeRegister{"a": reg(2, 11)}, []string{"a: register at version 2 (token 0xb, write 4294967307), log's last 1 (token 0xa, write 4294967306)"}},
		{"register holds another write", []Event{logRow("a", 1, 10)},
			map[string]storeRegister{"a": reg(1, 9)}, []string{"a: register at version 1 (token 0x9, write 4294967305), log's last 1 (token 0xa, write 4294967306)"}},
		{"register with no log", nil,
			map[string]storeRegister{"a": reg(1, 10)}, []string{"a: register at version 1 (token 0xa, write 4294967306), log's last 0 (token 0x0, write 0)"}},
		{"log with no register", []Event{logRow("a", 1, 10)}, nil, []string{"a: logged writes, no register row"}},
	} {
		if got := wholeLog(c.rows, c.regs); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// What the read-back finds goes into the history: the rows, each problem
// as NoteStoreInconsistent, then NoteStoreRead; a read-back that failed is
// NoteStoreUnread alone.
func TestRecordReadBack(t *testing.T) {
	h := startHub(t)
	rows := []Event{logRow("a", 1, 10), logRow("a", 3, 12)}
	recordReadBack(h, StoreSQLite, rows, wholeLog(rows, map[string]storeRegister{"a": {N: 3, Token: 12, WriteID: writeID(1, 12)}}), nil)
	recordReadBack(h, StoreSQLite, nil, nil, errors.New("no quorum"))
	var got []string
	for _, e := range h.history() {
		got = append(got, e.Kind+" "+e.Outcome+" "+e.Detail+e.Err)
	}
	want := []string{"committed  ", "committed  ", "note store-inconsistent a: version 3 follows 1", "note store-read 2 rows from sqlite",
		"note store-unread no quorum"}
	if !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}
