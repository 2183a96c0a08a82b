// Command fence shows what a fencing token is for: a bank-account service
// run as two replicas, each withdrawal under the zklock Echo middleware,
// writing to SQLite (default) or PostgreSQL through fence.Guard.
//
// Replica B takes the lock on an account for a withdrawal of 70, reads
// the balance (100) and, while it authorizes the payment, is frozen with
// SIGSTOP, past its ZooKeeper session timeout. Replica A takes the lock
// for a withdrawal of 60 and pays it (balance 40). B is let go: it writes
// the balance it computed before the pause, 30. With the fence its write
// is refused (its token is older than A's); on the same route without the
// fence, the late write goes through and the account pays out 130 from
// 100. The program prints both ledgers and exits 1 if the fenced one was
// ever overdrawn.
//
//	go run ./examples/fence
//	FENCE_POSTGRES_DSN=postgres://user@host/db ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/fence
//
// Without ZKLOCK_SERVERS it starts a throwaway ZooKeeper server (needs
// the Debian zookeeper package; see package zktest); without
// FENCE_POSTGRES_DSN it uses a SQLite file in a temporary directory.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/internal/zkenv/zkstart"
)

// EnvPostgres names the PostgreSQL database to use instead of SQLite.
const EnvPostgres = "FENCE_POSTGRES_DSN"

const (
	opening = 100
	paused  = 70 // replica B's withdrawal
	next    = 60 // replica A's
)

func main() {
	child := flag.String("child", "", "internal: run as the replica of this name")
	zkDSN := flag.String("zk", "", "internal: the child's ZooKeeper")
	driver := flag.String("driver", "", "internal: the child's database driver")
	dsn := flag.String("dsn", "", "internal: the child's database")
	sessionTimeout := flag.Duration("session-timeout", 2*time.Second, "session timeout of the paused replica (ZooKeeper may raise it to its minimum)")
	flag.Parse()
	if *child != "" {
		if err := runChild(*zkDSN, *driver, *dsn, *child, *sessionTimeout); err != nil {
			fmt.Fprintln(os.Stderr, "replica", *child+":", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	zk, stopZK, err := zkstart.ServersOrStart(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ok, err := run(ctx, os.Stdout, zk, *sessionTimeout)
	stopZK()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// run sets up the database and both replicas, plays the scenario with and
// without the fence, and prints the report. ok is false if the fenced
// account was overdrawn.
func run(ctx context.Context, w io.Writer, zkDSN string, sessionTimeout time.Duration) (ok bool, err error) {
	driver, dsn := "pgx", os.Getenv(EnvPostgres)
	if dsn == "" {
		dir, err := os.MkdirTemp("", "fence-example-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(dir)
		driver, dsn = "sqlite", "file:"+filepath.Join(dir, "bank.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return false, err
	}
	defer db.Close()
	f, err := setUp(ctx, db)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "database: %s; fence table %s\n", f.Dialect(), f.Table())

	self, err := os.Executable()
	if err != nil {
		return false, err
	}
	b, err := startChild(ctx, self, zkDSN, driver, dsn, sessionTimeout)
	if err != nil {
		return false, err
	}
	defer b.stop()
	a, err := startReplica(ctx, zkDSN, 10*time.Second, &bank{db: db, dialect: f.Dialect(), fence: f, replica: "A", pause: func(string) {}})
	if err != nil {
		return false, err
	}
	defer a.close()

	run := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff) // fresh accounts in a shared database
	ok = true
	for _, fenced := range []bool{true, false} {
		account, route := "f"+run, "/accounts/%s/withdraw"
		if !fenced {
			account, route = "u"+run, "/nofence/accounts/%s/withdraw"
		}
		paidOut, balance, err := scenario(ctx, w, db, f.Dialect(), a, b, account, route, fenced)
		if err != nil {
			return false, err
		}
		switch {
		case paidOut <= opening && balance == opening-paidOut:
			fmt.Fprintf(w, "paid out %d of %d, balance %d: never overdrawn.\n\n", paidOut, opening, balance)
		case fenced:
			ok = false
			fmt.Fprintf(w, "paid out %d of %d, balance %d: OVERDRAWN WITH THE FENCE (a bug)\n\n", paidOut, opening, balance)
		default:
			fmt.Fprintf(w, "paid out %d of %d, balance %d: overdrawn by %d; the lock alone could not stop the paused replica.\n\n",
				paidOut, opening, balance, paidOut-opening)
		}
	}
	return ok, nil
}

// scenario plays one account: B reads and freezes, A pays, B resumes.
func scenario(ctx context.Context, w io.Writer, db *sql.DB, d fence.Dialect, a *replica, b *child, account, route string, fenced bool) (paidOut, balance int64, err error) {
	title := "with the fence"
	if !fenced {
		title = "without the fence (same lock, no Guard)"
	}
	fmt.Fprintf(w, "== account %s, %s: opening balance %d\n", account, title, opening)
	if err := openAccount(ctx, db, d, account, opening); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	bDone := make(chan string, 1)
	go func() { bDone <- post(ctx, b.url+fmt.Sprintf(route, account)+fmt.Sprintf("?amount=%d", paused)) }()
	if line, err := b.next(ctx); err != nil || line != "AUTHORIZING "+account {
		return 0, 0, fmt.Errorf("replica B said %q (%v), want AUTHORIZING %s", line, err, account)
	}
	fmt.Fprintf(w, "B: holds the lock, read balance %d, authorizing %d ... frozen (SIGSTOP)\n", opening, paused)
	if err := b.pause(); err != nil {
		return 0, 0, err
	}
	aStart := time.Now()
	res := post(ctx, a.url+fmt.Sprintf(route, account)+fmt.Sprintf("?amount=%d", next))
	fmt.Fprintf(w, "A: took the lock after %s (B's session expired) and answered: %s", since(aStart), res)
	if err := b.resume(); err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(w, "B: resumed (SIGCONT) and answered: %s", <-bDone)

	es, err := ledger(ctx, db, d, account)
	if err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(w, "ledger of %s after %s:\n  %-4s %-8s %7s %12s %8s\n", account, since(start), "seq", "replica", "amount", "token", "balance")
	for _, e := range es {
		fmt.Fprintf(w, "  %-4d %-8s %7d %12d %8d\n", e.seq, e.replica, e.amount, e.token, e.balance)
		paidOut += e.amount
	}
	balance, err = accountBalance(ctx, db, d, account)
	return paidOut, balance, err
}

// post sends a withdrawal and returns "<status> <body>".
func post(ctx context.Context, url string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, body)
}

// child is replica B, a process of its own so that it can be frozen.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	url   string
}

func startChild(ctx context.Context, self, zkDSN, driver, dsn string, sessionTimeout time.Duration) (*child, error) {
	cmd := exec.Command(self, "-child", "B", "-zk", zkDSN, "-driver", driver, "-dsn", dsn, "-session-timeout", sessionTimeout.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 8)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	line, err := c.next(ctx)
	if err != nil || !strings.HasPrefix(line, "LISTENING ") {
		c.stop()
		return nil, fmt.Errorf("replica B said %q (%v), want LISTENING", line, err)
	}
	c.url = strings.TrimPrefix(line, "LISTENING ")
	return c, nil
}

func (c *child) next(ctx context.Context) (string, error) {
	select {
	case l, ok := <-c.lines:
		if !ok {
			return "", fmt.Errorf("replica B exited")
		}
		return l, nil
	case <-time.After(time.Minute):
		return "", fmt.Errorf("replica B said nothing for a minute")
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// pause freezes B, then lets it past its pause point: the line waits in
// the pipe until B runs again.
func (c *child) pause() error {
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	waitStopped(c.cmd.Process.Pid)
	_, err := io.WriteString(c.stdin, "go on\n")
	return err
}

func (c *child) resume() error { return c.cmd.Process.Signal(syscall.SIGCONT) }

func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// waitStopped waits until every thread of pid is stopped (state T in
// /proc), so that the process does nothing more from then on.
func waitStopped(pid int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		all := len(tasks) > 0
		for _, t := range tasks {
			b, err := os.ReadFile(t)
			if err != nil {
				continue
			}
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || (s[i+2] != 'T' && s[i+2] != 't') {
				all = false
				break
			}
		}
		if all {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
