package fence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Dialect names the SQL dialect a fence speaks.
type Dialect string

// The dialects a fence speaks. Both are tested against the real engines.
const (
	// Postgres is PostgreSQL 9.5 or later (INSERT ... ON CONFLICT), with
	// any database/sql driver (pgx's stdlib, lib/pq).
	Postgres Dialect = "postgres"
	// SQLite is SQLite 3.24 or later (upsert), with any database/sql
	// driver (modernc.org/sqlite, mattn/go-sqlite3).
	SQLite Dialect = "sqlite"
)

// statements are a fence's SQL, built once for its table and dialect.
type statements struct {
	create string // the table, if it does not exist
	guard  string // the upsert: $1 resource, $2 token; one row affected if accepted
	stored string // the stored token of $1
}

func (d Dialect) statements(table string) (statements, error) {
	q := quoteTable(table)
	switch d {
	case Postgres:
		return statements{
			create: "CREATE TABLE IF NOT EXISTS " + q + " (resource TEXT PRIMARY KEY, token BIGINT NOT NULL CHECK (token > 0))",
			guard: "INSERT INTO " + q + " AS f (resource, token) VALUES ($1, $2) " +
				"ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token WHERE f.token <= EXCLUDED.token",
			stored: "SELECT token FROM " + q + " WHERE resource = $1",
		}, nil
	case SQLite:
		return statements{
			create: "CREATE TABLE IF NOT EXISTS " + q + " (resource TEXT PRIMARY KEY NOT NULL, token INTEGER NOT NULL CHECK (token > 0)) WITHOUT ROWID",
			guard: "INSERT INTO " + q + " AS f (resource, token) VALUES (?1, ?2) " +
				"ON CONFLICT (resource) DO UPDATE SET token = excluded.token WHERE f.token <= excluded.token",
			stored: "SELECT token FROM " + q + " WHERE resource = ?1",
		}, nil
	}
	return statements{}, fmt.Errorf("%w: %q (want fence.Postgres or fence.SQLite)", ErrUnknownDialect, string(d))
}

// validTable reports whether name is a table name a fence accepts: a
// lower-case identifier of at most 63 bytes, optionally qualified by a
// schema written the same way ("fencing.tokens").
func validTable(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 || p[0] >= '0' && p[0] <= '9' {
			return false
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// quoteTable quotes a valid table name, so that a reserved word works too;
// quoting a lower-case name does not change which table it names.
func quoteTable(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = `"` + p + `"`
	}
	return strings.Join(parts, ".")
}

// detect asks the database which dialect it speaks. version() is asked
// first: it exists in PostgreSQL, and where it does not (SQLite) the failed
// statement does not spoil a transaction, which in PostgreSQL it would.
func detect(ctx context.Context, db Tx) (Dialect, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err == nil {
		if strings.HasPrefix(v, "PostgreSQL ") {
			return Postgres, nil
		}
		return "", fmt.Errorf("%w: the database says it is %q; only PostgreSQL and SQLite are supported", ErrUnknownDialect, v)
	}
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err == nil {
		return SQLite, nil
	}
	return "", fmt.Errorf("%w: neither version() nor sqlite_version() answered; give fence.WithDialect", ErrUnknownDialect)
}

// Tx is what Guard runs its statement on: a *sql.Tx in the caller's own
// transaction (or a *sql.Conn in a transaction begun by hand).
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var (
	_ Tx = (*sql.Tx)(nil)
	_ Tx = (*sql.Conn)(nil)
)
