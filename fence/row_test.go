package fence_test

import (
	"errors"
	"testing"

	"github.com/zklockkit/zklockkit/fence"
)

// The single-statement pattern, for code without a transaction: the row
// keeps its last writer's token and the UPDATE's WHERE refuses smaller
// ones; ExecConditional reports a refused statement as ErrStaleToken.
func TestExecConditional(t *testing.T) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			e.exec(t, ctx, e.db, "INSERT INTO "+e.data+" (id) VALUES ('a')")
			update := e.q("UPDATE " + e.data + " SET balance = $1, token = $2 WHERE id = 'a' AND token <= $2")
			write := func(tok, balance int64) error {
				_, err := fence.ExecConditional(ctx, e.db, fence.NewToken("a", tok), update, balance, tok)
				return err
			}
			must(t, write(5, 100))
			must(t, write(5, 90)) // the same token again
			err := write(3, 1000)
			var se *fence.StaleError
			if !errors.Is(err, fence.ErrStaleToken) || !errors.As(err, &se) || se.Token != 3 || se.Resource != "a" {
				t.Fatalf("older token: %v", err)
			}
			must(t, write(8, 80))
			var balance, tok int64
			must(t, e.db.QueryRowContext(ctx, "SELECT balance, token FROM "+e.data+" WHERE id = 'a'").Scan(&balance, &tok))
			if balance != 80 || tok != 8 {
				t.Fatalf("row: balance %d, token %d", balance, tok)
			}
			if _, err := fence.ExecConditional(ctx, e.db, fence.NewToken("a", 0), update, 1, 0); !errors.Is(err, fence.ErrInvalidToken) {
				t.Fatalf("invalid token: %v", err)
			}
		})
	}
}
