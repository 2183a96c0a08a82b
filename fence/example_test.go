package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// servers stands for your ensemble, e.g. []string{"zk1:2181", "zk2:2181"}.
func servers() []string { return []string{zkServer.Addr()} }

// openDB stands for your database: here SQLite in memory (with
// modernc.org/sqlite), on one connection since each connection to
// ":memory:" is a database of its own; with PostgreSQL, sql.Open("pgx",
// dsn).
func openDB() *sql.DB {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL)"); err != nil {
		log.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO accounts VALUES ('42', 100)"); err != nil {
		log.Fatal(err)
	}
	return db
}

func ExampleFence_Guard() {
	ctx := context.Background()
	db := openDB()
	defer db.Close()
	f, err := fence.Install(ctx, db) // once, at start-up
	if err != nil {
		log.Fatal(err)
	}
	c, err := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/fence"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	withdraw := func(lease *zklock.Lease, amount int) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := f.Guard(ctx, tx, lease); err != nil { // first in the transaction
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE accounts SET balance = balance - ? WHERE id = '42'", amount); err != nil {
			return err
		}
		return tx.Commit()
	}

	first, _ := c.Acquire(ctx, "accounts/42")
	first.Release(ctx) // say the first holder stalls here, and its lease is lost
	second, _ := c.Acquire(ctx, "accounts/42")
	defer second.Release(ctx)

	fmt.Println("second:", withdraw(second, 30))
	err = withdraw(first, 30) // the first holder wakes up and writes late
	fmt.Println("first refused:", errors.Is(err, fence.ErrStaleToken))
	var balance int
	db.QueryRow("SELECT balance FROM accounts WHERE id = '42'").Scan(&balance)
	fmt.Println("balance:", balance)
	// Output:
	// second: <nil>
	// first refused: true
	// balance: 70
}

func ExampleFence_GuardFromContext() {
	ctx := context.Background()
	db := openDB()
	defer db.Close()
	f, _ := fence.Install(ctx, db)
	c, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/fence-ctx"))
	defer c.Close()
	lease, _ := c.Acquire(ctx, "accounts/42")
	defer lease.Release(ctx)

	// An adapter (Echo or net/http middleware, gRPC interceptor, generated
	// wrapper) runs a handler with a context like this one.
	handlerCtx := lease.Context(ctx)

	tx, _ := db.BeginTx(handlerCtx, nil)
	defer tx.Rollback()
	fmt.Println("under the lock:", f.GuardFromContext(handlerCtx, tx))
	fmt.Println("elsewhere:", f.GuardFromContext(ctx, tx))
	// Output:
	// under the lock: <nil>
	// elsewhere: fence: no fencing token: the context carries no lease
}

// A service calls another while it holds a lock: the token travels in the
// Zklock-Fence-Token header and the callee guards its own transaction
// with it.
func ExampleTransport() {
	ctx := context.Background()
	db := openDB()
	defer db.Close()
	f, _ := fence.Install(ctx, db)

	// The callee.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tx, _ := db.BeginTx(r.Context(), nil)
		defer tx.Rollback()
		if err := f.GuardRequest(r.Context(), tx, r); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		tx.Commit()
		tok, _ := fence.FromRequest(r)
		fmt.Println("callee: guarded", tok.Resource())
	}))
	defer srv.Close()

	// The caller, holding the lock.
	c, _ := zklock.Connect(ctx, servers(), zklock.WithRoot("/example/fence-http"))
	defer c.Close()
	lease, _ := c.Acquire(ctx, "accounts/42")
	defer lease.Release(ctx)
	client := &http.Client{Transport: fence.Transport(nil)}
	req, _ := http.NewRequestWithContext(lease.Context(ctx), "POST", srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("caller:", resp.Status)
	// Output:
	// callee: guarded accounts/42
	// caller: 200 OK
}

// Without a transaction: the row keeps its last writer's token and one
// conditional UPDATE refuses smaller ones.
func ExampleExecConditional() {
	ctx := context.Background()
	db := openDB()
	defer db.Close()
	db.Exec("ALTER TABLE accounts ADD COLUMN fence_token INTEGER NOT NULL DEFAULT 0")
	const q = "UPDATE accounts SET balance = ?1, fence_token = ?2 WHERE id = '42' AND fence_token <= ?2"

	_, err := fence.ExecConditional(ctx, db, fence.NewToken("accounts/42", 8), q, 50, 8)
	fmt.Println("token 8:", err)
	_, err = fence.ExecConditional(ctx, db, fence.NewToken("accounts/42", 5), q, 0, 5)
	fmt.Println("token 5:", err)
	// Output:
	// token 8: <nil>
	// token 5: fence: token 5 for "accounts/42" is stale: a larger token has written
}
