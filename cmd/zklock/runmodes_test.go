package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// TestRunPositionalResource: RESOURCE comes first, as etcdctl lock and
// flock take it; with or without "--", with flags between it and "--";
// --resource still works.
func TestRunPositionalResource(t *testing.T) {
	root := zktest.UniqueRoot(t)
	echo := []string{"sh", "-c", `echo "$ZKLOCK_RESOURCE $*"`, "sh"}
	for _, args := range [][]string{
		append([]string{"run", "--root", root, "jobs/a", "--"}, append(echo, "x")...),
		append([]string{"run", "--root", root, "jobs/a"}, append(echo, "x")...), // etcdctl's form
		append([]string{"run", "--root", root, "jobs/a", "--wait", "1m", "--"}, append(echo, "x")...),
		append([]string{"run", "--root", root, "--resource", "jobs/a", "--"}, append(echo, "x")...),
		append([]string{"--root", root, "run", "jobs/a", "--"}, append(echo, "--try", "x")...), // CMD's own flags stay CMD's
	} {
		r := zkl(t, nil, args...)
		want := "jobs/a x\n"
		if strings.Contains(strings.Join(args, " "), "--try x") {
			want = "jobs/a --try x\n"
		}
		if r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("zklock %q: exit %d, stdout %q, stderr %q; want %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
}

// startHolding starts "zklock run ARGS -- CMD" where CMD touches ready and
// runs until done exists.
func startHolding(t *testing.T, dir, name string, args ...string) (cmd func() int, ready, done string) {
	t.Helper()
	ready, done = filepath.Join(dir, name+".ready"), filepath.Join(dir, name+".done")
	c, _, errb := start(t, nil, append(append([]string{"run"}, args...), "--", "sh", "-c",
		`touch "$1"; while [ ! -e "$2" ]; do sleep 0.02; done`, "sh", ready, done)...)
	return func() int {
		code := exitOf(t, c)
		if code != 0 {
			t.Errorf("%s: exit %d, stderr %q", name, code, errb.String())
		}
		return code
	}, ready, done
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunShared: --shared runs hold together; an exclusive run waits for
// them, and a --shared run waits for an exclusive holder.
func TestRunShared(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := client(t, root)
	dir := t.TempDir()
	waitA, readyA, doneA := startHolding(t, dir, "a", "--root", root, "--shared", "cache")
	waitB, readyB, doneB := startHolding(t, dir, "b", "--root", root, "--shared", "cache")
	eventually(t, "both readers to hold at once", func() bool { return exists(readyA) && exists(readyB) })
	q, err := c.Inspect(context.Background(), "cache")
	if err != nil || len(q.Holders()) != 2 || q.Holders()[0].Mode != zklock.Read || q.Holders()[1].Mode != zklock.Read {
		t.Fatalf("queue %+v, %v; want two read holders", q, err)
	}
	ran := filepath.Join(dir, "ran")
	if r := zkl(t, nil, "run", "--root", root, "--try", "cache", "--", "touch", ran); r.code != ExitBusy {
		t.Errorf("exclusive --try beside two readers: exit %d, stderr %q; want %d", r.code, r.stderr, ExitBusy)
	}
	touch(t, doneA)
	touch(t, doneB)
	waitA()
	waitB()

	// an exclusive holder keeps readers out
	held, err := c.Acquire(context.Background(), "cache")
	if err != nil {
		t.Fatal(err)
	}
	if r := zkl(t, nil, "run", "--root", root, "--shared", "--try", "cache", "--", "touch", ran); r.code != ExitBusy {
		t.Errorf("--shared --try beside a writer: exit %d, stderr %q; want %d", r.code, r.stderr, ExitBusy)
	}
	held.Release(context.Background())
	if exists(ran) {
		t.Error("a CMD ran without its lock")
	}
}

// TestRunLimit: --limit N lets N runs hold at once, not N+1; a run with
// another limit is refused as a usage error.
func TestRunLimit(t *testing.T) {
	root := zktest.UniqueRoot(t)
	dir := t.TempDir()
	waitA, readyA, doneA := startHolding(t, dir, "a", "--root", root, "--limit", "2", "farm")
	waitB, readyB, doneB := startHolding(t, dir, "b", "--root", root, "--limit", "2", "farm")
	eventually(t, "two holders at once", func() bool { return exists(readyA) && exists(readyB) })
	ran := filepath.Join(dir, "ran")
	r := zkl(t, nil, "run", "--root", root, "--limit", "2", "--try", "farm", "--", "touch", ran)
	if r.code != ExitBusy || !strings.Contains(r.stderr, "held by sh") {
		t.Errorf("third --try: exit %d, stderr %q; want %d", r.code, r.stderr, ExitBusy)
	}
	r = zkl(t, nil, "run", "--root", root, "--limit", "3", "--try", "farm", "--", "touch", ran)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "bad --limit 3") {
		t.Errorf("another limit: exit %d, stderr %q; want %d", r.code, r.stderr, ExitUsage)
	}
	oneLine(t, "limit mismatch", r.stderr)
	touch(t, doneA)
	waitA()
	if r := zkl(t, nil, "run", "--root", root, "--limit", "2", "--try", "farm", "--", "true"); r.code != 0 {
		t.Errorf("--try with a free slot: exit %d, stderr %q", r.code, r.stderr)
	}
	touch(t, doneB)
	waitB()
	if exists(ran) {
		t.Error("a third CMD ran with two holders")
	}
}

// TestRunConflictExitCode: -E N replaces the busy and timeout codes, as in
// flock; 0 makes "someone else runs it" a success.
func TestRunConflictExitCode(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "backup", "other-host")
	ran := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-E", "0", "--try"}, 0},
		{[]string{"--conflict-exit-code", "3", "--try"}, 3},
		{[]string{"-E", "4", "--wait", "300ms"}, 4},
		{[]string{"--try"}, ExitBusy},
	} {
		args := append(append([]string{"run", "--root", root}, tc.args...), "backup", "--", "touch", ran)
		r := zkl(t, nil, args...)
		if r.code != tc.code || !strings.Contains(r.stderr, `"backup"`) {
			t.Errorf("%q: exit %d, stderr %q; want %d", tc.args, r.code, r.stderr, tc.code)
		}
	}
	if exists(ran) {
		t.Error("CMD ran without the lock")
	}
}

// TestRunTryWhileZooKeeperIsAway: with the server stopped, or silent,
// run --try exits 113 within the try bound (min(session timeout/3, 1s)),
// connecting included, and CMD does not run. The whole process is timed,
// so the grace covers starting it.
func TestRunTryWhileZooKeeperIsAway(t *testing.T) {
	const grace = time.Second
	srv, err := zktest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	proxy, err := zktest.NewProxy(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	root := zktest.UniqueRoot(t)
	ran := filepath.Join(t.TempDir(), "ran")
	if r := zkl(t, nil, "run", "--servers", proxy.Addr(), "--root", root, "--try", "nightly", "--", "true"); r.code != 0 {
		t.Fatalf("with ZooKeeper up: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, tc := range []struct {
		outage  string
		extra   []string
		bound   time.Duration
		boundIs string
	}{
		{"silent", nil, TryBound(zklock.DefaultSessionTimeout), "1s"},
		{"silent", []string{"--session-timeout", "1500ms"}, TryBound(1500 * time.Millisecond), "500ms"},
		{"stopped", nil, TryBound(zklock.DefaultSessionTimeout), "1s"},
	} {
		switch tc.outage {
		case "silent":
			proxy.Blackhole(true)
		case "stopped":
			proxy.Blackhole(false)
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		args := append(append([]string{"run", "--servers", proxy.Addr(), "--root", root, "--try"}, tc.extra...), "nightly", "--", "touch", ran)
		// What starting the process costs now (a -race binary at load 12
		// took over a second): the bound is the CLI's, from its start.
		begin := time.Now()
		zkl(t, nil, "--version")
		start := time.Since(begin)
		begin = time.Now()
		r := zkl(t, nil, args...)
		took := time.Since(begin) - start
		t.Logf("%s, %q: exit %d after %v (less %v to start a process)", tc.outage, tc.extra, r.code, took.Round(time.Millisecond), start.Round(time.Millisecond))
		if r.code != ExitUnreachable || !strings.Contains(r.stderr, "within "+tc.boundIs+" (the --try bound)") {
			t.Errorf("%s %q: exit %d, stderr %q; want %d", tc.outage, tc.extra, r.code, r.stderr, ExitUnreachable)
		}
		if took > tc.bound+grace {
			t.Errorf("%s %q: answered %v after its start; want within %v (+%v for its timers and the scheduler)", tc.outage, tc.extra, took, tc.bound, grace)
		}
	}
	if exists(ran) {
		t.Error("CMD ran while ZooKeeper was away")
	}
	// An explicit --connect-timeout bounds the connection instead.
	r := zkl(t, nil, "run", "--servers", proxy.Addr(), "--connect-timeout", "300ms", "--try", "nightly", "--", "true")
	if r.code != ExitUnreachable || !strings.Contains(r.stderr, "within 300ms (--connect-timeout)") {
		t.Errorf("--connect-timeout 300ms: exit %d, stderr %q", r.code, r.stderr)
	}
	// --wait D bounds the connection too (a new user's probe waited the
	// 10 s connect timeout for --wait 2s): 113 within D.
	begin := time.Now()
	r = zkl(t, nil, "run", "--servers", proxy.Addr(), "--wait", "700ms", "nightly", "--", "touch", ran)
	took := time.Since(begin)
	if r.code != ExitUnreachable || !strings.Contains(r.stderr, "within 700ms (--wait)") {
		t.Errorf("--wait 700ms: exit %d, stderr %q; want %d", r.code, r.stderr, ExitUnreachable)
	}
	if took > 700*time.Millisecond+DefaultConnectTimeout/2 {
		t.Errorf("--wait 700ms: answered after %v; want within 700ms and a process start", took)
	}
	if exists(ran) {
		t.Error("CMD ran while ZooKeeper was away")
	}
}

// TestBreak: the administrator of zklock.WithAdminDigest breaks a stuck
// lock: the holder's node goes, its lease is lost at once (Done closes,
// node_deleted), the waiter takes the lock; another identity cannot, and
// --dry-run deletes nothing.
func TestBreak(t *testing.T) {
	root := zktest.UniqueRoot(t)
	ctx := context.Background()
	tenant := []zklock.Option{zklock.WithDigestAuth("billing", "billing-pw"), zklock.WithAdminDigest("ops", "ops-pw")}
	holder := client(t, root, append(tenant, zklock.WithLabel("stuck-job"))...)
	lease, err := holder.Acquire(ctx, "ledger")
	if err != nil {
		t.Fatal(err)
	}
	waiter := client(t, root, append(tenant, zklock.WithLabel("next-job"))...)
	got := make(chan *zklock.Lease, 1)
	go func() {
		l, err := waiter.Acquire(ctx, "ledger")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, "the waiter to queue", func() bool { return queueLen(t, holder, "ledger") == 2 })

	r := zkl(t, nil, "break", "--root", root, "--user", "mallory", "--password", "x", "ledger")
	if r.code != ExitError || !strings.Contains(r.stderr, "not allowed to delete") || !strings.Contains(r.stderr, "stuck-job") {
		t.Errorf("break as another identity: exit %d, stderr %q; want %d", r.code, r.stderr, ExitError)
	}
	r = zkl(t, []string{"ZKLOCK_PASSWORD=ops-pw"}, "break", "--root", root, "--user", "ops", "--dry-run", "ledger")
	if r.code != 0 || !strings.Contains(r.stdout, "would break ledger: held by stuck-job") {
		t.Errorf("--dry-run: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	select {
	case <-lease.Done():
		t.Fatalf("the lease ended before the break: %v", lease.Err())
	default:
	}

	r = zkl(t, []string{"ZKLOCK_PASSWORD=ops-pw"}, "break", "--root", root, "--user", "ops", "ledger")
	want := "broke ledger: deleted the node of stuck-job"
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, lease.Path()) ||
		!strings.Contains(r.stdout, "1 waiting: the next in line takes the lock") {
		t.Fatalf("break: exit %d, stdout %q, stderr %q; want %q", r.code, r.stdout, r.stderr, want)
	}
	select {
	case <-lease.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the broken lease's Done did not close")
	}
	var lost *zklock.LostError
	if !errors.As(lease.Err(), &lost) || lost.Reason != zklock.LossNodeDeleted {
		t.Errorf("broken lease's Err = %v, want node_deleted", lease.Err())
	}
	l := <-got
	if l == nil {
		t.FailNow()
	}
	if l.Token() <= lease.Token() {
		t.Errorf("the next holder's token %d is not above the broken one's %d", l.Token(), lease.Token())
	}
	l.Release(ctx)
	r = zkl(t, nil, "break", "--root", root, "ledger")
	if r.code != 0 || r.stdout != "ledger has no holder: nothing to break\n" {
		t.Errorf("break of a free lock: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestBreakStopsRun: a "zklock run" whose lock is broken stops CMD and
// exits 114.
func TestBreakStopsRun(t *testing.T) {
	root := zktest.UniqueRoot(t)
	f := filepath.Join(t.TempDir(), "signals")
	cmd, _, errb := start(t, nil, "run", "--root", root, "cron/job", "--", "sh", "-c", sleeper, "sh", f)
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	if r := zkl(t, nil, "break", "--root", root, "cron/job"); r.code != 0 || !strings.Contains(r.stdout, "broke cron/job") {
		t.Fatalf("break: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if code := exitOf(t, cmd); code != ExitLeaseLost || !fileHas(f, "TERM") {
		t.Errorf("run: exit %d, CMD got SIGTERM: %v, stderr %q; want %d", code, fileHas(f, "TERM"), errb.String(), ExitLeaseLost)
	}
}
