package fence_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// engine is one real database with a fence on a table of its own.
type engine struct {
	name  string
	db    *sql.DB
	fence *fence.Fence
	data  string // a data table: id TEXT PRIMARY KEY, token, writes, balance
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func suffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sqliteDSN is how the tests open SQLite: WAL, and a busy timeout so that
// a writer waits for another's transaction instead of failing at once.
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)"
}

// engines returns PostgreSQL (the shared cluster, fresh tables) and SQLite
// (a fresh file), each with the fence installed and a data table.
func engines(t testing.TB) []*engine {
	return []*engine{postgresEngine(t), sqliteEngine(t)}
}

func postgresEngine(t testing.TB) *engine {
	t.Helper()
	db, err := sql.Open("pgx", pgCluster.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newEngine(t, "postgres", db)
}

func sqliteEngine(t testing.TB) *engine {
	t.Helper()
	return sqliteEngineAt(t, filepath.Join(t.TempDir(), "fence.db"))
}

func sqliteEngineAt(t testing.TB, path string) *engine {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newEngine(t, "sqlite", db)
}

func newEngine(t testing.TB, name string, db *sql.DB) *engine {
	t.Helper()
	ctx := testCtx(t)
	s := suffix()
	f, err := fence.Install(ctx, db, fence.WithTable("fence_"+s))
	if err != nil {
		t.Fatalf("%s: install: %v", name, err)
	}
	e := &engine{name: name, db: db, fence: f, data: "data_" + s}
	e.exec(t, ctx, db, "CREATE TABLE "+e.data+" (id TEXT PRIMARY KEY, token BIGINT NOT NULL DEFAULT 0, writes INTEGER NOT NULL DEFAULT 0, balance INTEGER NOT NULL DEFAULT 0)")
	return e
}

var dollar = regexp.MustCompile(`\$(\d)`)

// q writes a statement for the engine: $N placeholders become ?N in SQLite.
func (e *engine) q(s string) string {
	if e.name == "sqlite" {
		return dollar.ReplaceAllString(s, "?$1")
	}
	return s
}

func (e *engine) exec(t testing.TB, ctx context.Context, db fence.Execer, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(ctx, e.q(query), args...); err != nil {
		t.Fatalf("%s: %s: %v", e.name, query, err)
	}
}

// stored returns the token the fence holds for resource (0: none).
func (e *engine) stored(t testing.TB, resource string) int64 {
	t.Helper()
	var v int64
	err := e.db.QueryRowContext(testCtx(t), e.q("SELECT token FROM "+e.fence.Table()+" WHERE resource = $1"), resource).Scan(&v)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return v
}

// fencedWrite is a whole fenced transaction: Guard, then a write to the
// data row id that records the token, committed; the Guard's error (or
// the transaction's) is returned.
func (e *engine) fencedWrite(ctx context.Context, h fence.Holder, id string) error {
	tx, err := e.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := e.fence.Guard(ctx, tx, h); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, e.q("INSERT INTO "+e.data+" (id, token, writes) VALUES ($1, $2, 1) "+
		"ON CONFLICT (id) DO UPDATE SET token = $2, writes = "+e.data+".writes + 1"), id, h.Token()); err != nil {
		return err
	}
	return tx.Commit()
}

// newClient connects to the test ZooKeeper under a fresh root.
func newClient(t testing.TB, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]zklock.Option{zklock.WithRoot("/fence-test/" + suffix())}, opts...)
	c, err := zklock.Connect(ctx, []string{zkServer.Addr()}, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// leasePair returns two leases of resource, granted one after the other
// by ZooKeeper (older, newer), both released.
func leasePair(t testing.TB, c *zklock.Client, resource string) (older, newer *zklock.Lease) {
	t.Helper()
	ctx := testCtx(t)
	var ls [2]*zklock.Lease
	for i := range ls {
		l, err := c.Acquire(ctx, resource)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		ls[i] = l
	}
	if ls[0].Token() >= ls[1].Token() {
		t.Fatalf("tokens %d then %d: not increasing", ls[0].Token(), ls[1].Token())
	}
	return ls[0], ls[1]
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fmtErr(err error) string { return fmt.Sprintf("%v (%T)", err, err) }
