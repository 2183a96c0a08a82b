package fence_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// childEnv carries a pausedSpec (JSON) to the re-executed test binary.
const childEnv = "FENCE_TEST_PAUSED_HOLDER"

// pausedSpec is what the paused holder needs.
type pausedSpec struct {
	ZK       string `json:"zk"`
	Root     string `json:"root"`
	Resource string `json:"resource"`
	Driver   string `json:"driver"`
	DSN      string `json:"dsn"`
	Fence    string `json:"fence"`
	Data     string `json:"data"`
}

// pausedHolder takes the lock, says HELD, waits for a line on stdin (the
// test stops the process before sending it, and lets it go on only after
// its session has expired and another holder has written), then writes
// through the fence at once and says what the store answered.
func pausedHolder(s pausedSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sql.Open(s.Driver, s.DSN)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return err
	}
	f, err := fence.New(fence.WithDialect(dialectOf(s.Driver)), fence.WithTable(s.Fence))
	if err != nil {
		return err
	}
	c, err := zklock.Connect(ctx, []string{s.ZK}, zklock.WithRoot(s.Root), zklock.WithSessionTimeout(time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	l, err := c.Acquire(ctx, s.Resource)
	if err != nil {
		return err
	}
	fmt.Println("HELD", l.Token())
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	// Resumed. A holder paused after its last look at the lease has no
	// way to know it lost the lock: this one does not look (its context
	// is not the lease's), so what happens next is the store's decision.
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = f.Guard(context.Background(), tx, l)
	if err == nil {
		q := "INSERT INTO " + s.Data + " (id, token, writes) VALUES ('row', " + strconv.FormatInt(l.Token(), 10) +
			", 1) ON CONFLICT (id) DO UPDATE SET token = excluded.token, writes = " + s.Data + ".writes + 1"
		if _, err = tx.Exec(q); err == nil {
			err = tx.Commit()
		}
	}
	switch {
	case err == nil:
		fmt.Println("ACCEPTED")
	case errors.Is(err, fence.ErrStaleToken):
		fmt.Println("REFUSED", err)
	default:
		return err
	}
	return nil
}

func dialectOf(driver string) fence.Dialect {
	if driver == "pgx" {
		return fence.Postgres
	}
	return fence.SQLite
}

// A holder is stopped (SIGSTOP) past its session timeout while it holds
// the lock; the next holder acquires and writes; the paused holder is let
// go (SIGCONT) and its late transaction is refused with ErrStaleToken. The
// lock alone could not stop that write: only the fence does.
func TestIntegration_PausedHolder(t *testing.T) {
	for _, e := range engines(t) {
		t.Run(e.name, func(t *testing.T) {
			ctx := testCtx(t)
			root := "/fence-test/" + suffix()
			spec := pausedSpec{ZK: zkServer.Addr(), Root: root, Resource: "accounts/7", Fence: e.fence.Table(), Data: e.data}
			if e.name == "postgres" {
				spec.Driver, spec.DSN = "pgx", pgCluster.DSN()
			} else {
				var path string
				must(t, e.db.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path))
				spec.Driver, spec.DSN = "sqlite", sqliteDSN(path)
			}
			child := zktest.StartChild(t, childEnv, spec)
			held := child.Next(t, "HELD")
			childTok, err := strconv.ParseInt(held, 10, 64)
			if err != nil {
				t.Fatalf("paused holder said HELD %q", held)
			}

			// Stop it, then tell it to write: the line waits in the pipe.
			must(t, zktest.PauseProcess(child.Cmd.Process))
			_, err = io.WriteString(child.Stdin, "write\n")
			must(t, err)

			// The next holder gets the lock once the paused one's session
			// has expired, and writes.
			c := newClient(t, zklock.WithRoot(root))
			start := time.Now()
			l, err := c.Acquire(ctx, spec.Resource, zklock.MaxWait(30*time.Second))
			must(t, err)
			defer l.Release(ctx)
			t.Logf("next holder: token %d after %v (paused holder's token %d)", l.Token(), time.Since(start).Round(time.Millisecond), childTok)
			if l.Token() <= childTok {
				t.Fatalf("next token %d is not above %d", l.Token(), childTok)
			}
			must(t, e.fencedWrite(ctx, l, "row"))

			// Let the paused holder go on: its write reaches the store late.
			must(t, zktest.ResumeProcess(child.Cmd.Process))
			verdict := child.Next(t, "REFUSED")
			if !strings.Contains(verdict, "stale") {
				t.Fatalf("paused holder's late write: REFUSED %q, want ErrStaleToken", verdict)
			}
			t.Logf("paused holder: %s", verdict)
			must(t, child.Cmd.Wait())
			var tok, writes int64
			must(t, e.db.QueryRowContext(ctx, e.q("SELECT token, writes FROM "+e.data+" WHERE id = 'row'")).Scan(&tok, &writes))
			if tok != l.Token() || writes != 1 {
				t.Fatalf("row: token %d after %d writes; want only the next holder's write (token %d)", tok, writes, l.Token())
			}
		})
	}
}
