package pgtest_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/zklockkit/zklockkit/internal/pgtest"
)

// A cluster starts, answers queries over TCP, and is gone after Close:
// its port refuses connections and its directory is removed.
func TestStartQueryClose(t *testing.T) {
	c, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	db, err := sql.Open("pgx", c.DSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		t.Fatalf("query: %v\n%s", err, c.LogTail())
	}
	t.Logf("%s at %s", v, c.Addr())
	var fsync string
	if err := db.QueryRowContext(ctx, "SHOW fsync").Scan(&fsync); err != nil || fsync != "off" {
		t.Fatalf("fsync = %q, %v; want off by default", fsync, err)
	}
	db.Close()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir()); !os.IsNotExist(err) {
		t.Fatalf("directory %s left behind: %v", c.Dir(), err)
	}
	db2, _ := sql.Open("pgx", c.DSN())
	defer db2.Close()
	if err := db2.PingContext(ctx); err == nil {
		t.Fatal("server still answers after Close")
	}
}
