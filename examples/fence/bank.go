package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// bank is the service's data: accounts and their ledger, in SQLite or
// PostgreSQL, behind a fence.
type bank struct {
	db      *sql.DB
	dialect fence.Dialect
	fence   *fence.Fence
	replica string       // this replica's name, written in the ledger
	pause   func(string) // called between a withdrawal's read and its write
}

var dollar = regexp.MustCompile(`\$(\d)`)

// q writes a statement for the dialect: $N placeholders become ?N in SQLite.
func (b *bank) q(s string) string {
	if b.dialect == fence.SQLite {
		return dollar.ReplaceAllString(s, "?$1")
	}
	return s
}

// setUp creates the tables (if needed) and the fence.
func setUp(ctx context.Context, db *sql.DB) (*fence.Fence, error) {
	f, err := fence.Install(ctx, db)
	if err != nil {
		return nil, err
	}
	serial := "BIGSERIAL PRIMARY KEY"
	if f.Dialect() == fence.SQLite {
		serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
	}
	for _, s := range []string{
		"CREATE TABLE IF NOT EXISTS fence_demo_accounts (id TEXT PRIMARY KEY, balance BIGINT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS fence_demo_ledger (seq " + serial + ", account TEXT NOT NULL, replica TEXT NOT NULL, " +
			"amount BIGINT NOT NULL, token BIGINT NOT NULL, balance BIGINT NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// withdraw pays out ?amount= from account :id, under the lock the
// middleware holds on "accounts/{id}". It reads the balance, asks the card
// network to authorize the payment (slow: this is where a replica can be
// paused), then writes the new balance and the ledger entry. Both
// transactions start with the fence's Guard, so a holder that was paused
// past its lock's loss cannot write on a balance it read before another
// holder paid. The /unsafe route runs the same handler without the fence.
func (b *bank) withdraw(fenced bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		amount, err := strconv.ParseInt(c.QueryParam("amount"), 10, 64)
		if err != nil || amount <= 0 {
			return c.String(http.StatusBadRequest, "bad amount\n")
		}
		// The request's context is the lease's (the middleware's doing):
		// it carries the lease for GuardFromContext, and it is cancelled
		// when the lock is lost. A replica that resumes after a pause
		// races that notice with its own write; this handler keeps its
		// database work out of the race (WithoutCancel) so that the demo
		// shows what the store decides. A handler that stays in the race
		// is often stopped earlier; the fence catches the times it is not.
		ctx := context.WithoutCancel(c.Request().Context())
		lease := zklock.LeaseFromContext(ctx)

		var balance int64
		err = b.inTx(ctx, fenced, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, b.q("SELECT balance FROM fence_demo_accounts WHERE id = $1"), id).Scan(&balance)
		})
		if err != nil {
			return b.fail(c, err)
		}
		if balance < amount {
			return c.String(http.StatusConflict, fmt.Sprintf("insufficient funds: balance %d\n", balance))
		}
		b.pause(id) // authorizing with the card network

		err = b.inTx(ctx, fenced, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, b.q("UPDATE fence_demo_accounts SET balance = $1 WHERE id = $2"), balance-amount, id); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, b.q("INSERT INTO fence_demo_ledger (account, replica, amount, token, balance) VALUES ($1, $2, $3, $4, $5)"),
				id, b.replica, amount, lease.Token(), balance-amount)
			return err
		})
		if err != nil {
			return b.fail(c, err)
		}
		return c.String(http.StatusOK, fmt.Sprintf("paid %d; balance %d (token %d)\n", amount, balance-amount, lease.Token()))
	}
}

// inTx runs f in a transaction that starts with the fence's Guard (unless
// fenced is false).
func (b *bank) inTx(ctx context.Context, fenced bool, f func(*sql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if fenced {
		if err := b.fence.GuardFromContext(ctx, tx); err != nil {
			return err
		}
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (b *bank) fail(c echo.Context, err error) error {
	if errors.Is(err, fence.ErrStaleToken) {
		return c.String(http.StatusConflict, "refused: "+err.Error()+"\n")
	}
	return c.String(http.StatusInternalServerError, err.Error()+"\n")
}

// entry is one line of the ledger.
type entry struct {
	seq, amount, token, balance int64
	replica                     string
}

func ledger(ctx context.Context, db *sql.DB, d fence.Dialect, account string) ([]entry, error) {
	b := &bank{dialect: d}
	rows, err := db.QueryContext(ctx, b.q("SELECT seq, replica, amount, token, balance FROM fence_demo_ledger WHERE account = $1 ORDER BY seq"), account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.seq, &e.replica, &e.amount, &e.token, &e.balance); err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, rows.Err()
}

func openAccount(ctx context.Context, db *sql.DB, d fence.Dialect, id string, balance int64) error {
	b := &bank{dialect: d}
	_, err := db.ExecContext(ctx, b.q("INSERT INTO fence_demo_accounts (id, balance) VALUES ($1, $2)"), id, balance)
	return err
}

func accountBalance(ctx context.Context, db *sql.DB, d fence.Dialect, id string) (int64, error) {
	b := &bank{dialect: d}
	var v int64
	err := db.QueryRowContext(ctx, b.q("SELECT balance FROM fence_demo_accounts WHERE id = $1"), id).Scan(&v)
	return v, err
}

// since formats a duration for the report.
func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }
