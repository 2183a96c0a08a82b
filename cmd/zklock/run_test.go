package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// TestRunNoOverlap: concurrent invocations of run on one resource never
// run their commands at the same time.
func TestRunNoOverlap(t *testing.T) {
	root := zktest.UniqueRoot(t)
	f := filepath.Join(t.TempDir(), "log")
	script := `echo start $(date +%s%N) >> "$1"; sleep 0.2; echo end $(date +%s%N) >> "$1"`
	const procs, rounds = 3, 2
	var wg sync.WaitGroup
	codes := make(chan int, procs*rounds)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				res := zkl(t, nil, "run", "--root", root, "--resource", "nightly", "--wait", "2m", "--", "sh", "-c", script, "sh", f)
				if res.stderr != "" {
					t.Errorf("stderr: %q", res.stderr)
				}
				codes <- res.code
			}
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 0 {
			t.Fatalf("run exited %d", c)
		}
	}
	type span struct{ start, end int64 }
	var spans []span
	file, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	var open *span
	for sc.Scan() {
		kind, ts, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		switch {
		case kind == "start" && open == nil:
			open = &span{start: n}
		case kind == "end" && open != nil:
			open.end = n
			spans = append(spans, *open)
			open = nil
		default:
			t.Fatalf("start and end lines interleave: %q after %+v", sc.Text(), open)
		}
	}
	if len(spans) != procs*rounds {
		t.Fatalf("%d runs recorded, want %d", len(spans), procs*rounds)
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			t.Errorf("runs overlap: %+v and %+v", spans[i-1], spans[i])
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	root := zktest.UniqueRoot(t)
	for _, tc := range []struct {
		cmd  []string
		code int
	}{
		{[]string{"true"}, 0},
		{[]string{"false"}, 1},
		{[]string{"sh", "-c", "exit 42"}, 42},
		{[]string{"sh", "-c", "exit 111"}, 111}, // CMD's code even where it equals one of ours
		{[]string{"sh", "-c", `kill -9 $$`}, 128 + 9},
	} {
		r := zkl(t, nil, append([]string{"run", "--root", root, "--resource", "codes", "--"}, tc.cmd...)...)
		if r.code != tc.code || r.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q; want %d", tc.cmd, r.code, r.stderr, tc.code)
		}
	}
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		code int
		want string
	}{
		{filepath.Join(dir, "missing"), 127, "command not found"},
		{"no-such-command-zklock-test", 127, "command not found"},
		{notExec, 126, "cannot run"},
	} {
		r := zkl(t, nil, "run", "--root", root, "--resource", "codes", "--", tc.cmd)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d %q", tc.cmd, r.code, r.stderr, tc.code, tc.want)
		}
		oneLine(t, tc.cmd, r.stderr)
	}
	if n := queueLen(t, client(t, root), "codes"); n != 0 {
		t.Errorf("%d lock nodes left behind", n)
	}
}

// TestRunEnvironment: CMD gets the fencing token, resource and node of the
// lease it runs under; the owner data names zklock's pid and CMD.
func TestRunEnvironment(t *testing.T) {
	root := zktest.UniqueRoot(t)
	dir := t.TempDir()
	f, done := filepath.Join(dir, "env"), filepath.Join(dir, "done")
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "env/check", "--", "sh", "-c",
		`echo "$ZKLOCK_TOKEN $ZKLOCK_RESOURCE $ZKLOCK_NODE" > "$1.tmp" && mv "$1.tmp" "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", f, done)
	eventually(t, "CMD to start", func() bool { _, err := os.Stat(f); return err == nil })
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b))
	c := client(t, root)
	q, err := c.Inspect(context.Background(), "env/check")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Nodes) != 1 || len(fields) != 3 {
		t.Fatalf("queue %+v, env %q", q.Nodes, b)
	}
	n := q.Nodes[0]
	if fields[0] != strconv.FormatInt(n.Token, 10) || fields[1] != "env/check" || fields[2] != n.Path {
		t.Errorf("CMD saw %q; the holder is token %d node %s", b, n.Token, n.Path)
	}
	if n.Owner.PID != cmd.Process.Pid || n.Owner.Label != "sh" {
		t.Errorf("owner %+v, want pid %d and label sh (CMD's name)", n.Owner, cmd.Process.Pid)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 0 || errb.String() != "" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if n := queueLen(t, c, "env/check"); n != 0 {
		t.Errorf("%d lock nodes left after run", n)
	}
}

func TestRunBusyAndTimeout(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "busy", "other-host-job")
	c := client(t, root)
	ran := filepath.Join(t.TempDir(), "ran")

	r := zkl(t, nil, "run", "--root", root, "--resource", "busy", "--try", "--", "touch", ran)
	if r.code != 111 || !strings.Contains(r.stderr, `"busy" is busy: held by other-host-job`) {
		t.Errorf("--try: exit %d, stderr %q; want 111", r.code, r.stderr)
	}
	oneLine(t, "--try", r.stderr)

	r = zkl(t, nil, "run", "--root", root, "--resource", "busy", "--wait", "500ms", "--", "touch", ran)
	if r.code != 112 || !strings.Contains(r.stderr, `gave up waiting for the lock on "busy" after 500ms`) {
		t.Errorf("--wait: exit %d, stderr %q; want 112", r.code, r.stderr)
	}
	oneLine(t, "--wait", r.stderr)

	if _, err := os.Stat(ran); err == nil {
		t.Error("CMD ran without the lock")
	}
	if n := queueLen(t, c, "busy"); n != 1 {
		t.Errorf("%d nodes in the queue, want only the holder's", n)
	}
}

// TestRunWaitsInLine: run waits for the holder, then runs.
func TestRunWaitsInLine(t *testing.T) {
	root := zktest.UniqueRoot(t)
	lease := holdWithWaiters(t, root, "line", "holder")
	c := client(t, root)
	ran := filepath.Join(t.TempDir(), "ran")
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "line", "--wait", "5m", "--", "touch", ran)
	eventually(t, "run to queue", func() bool { return queueLen(t, c, "line") == 2 })
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("CMD ran while the lock was held")
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 0 || errb.String() != "" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(ran); err != nil {
		t.Error("CMD did not run once the lock was free")
	}
}

// TestRunInterruptedWhileWaiting: a signal while waiting ends zklock with
// 128+N and leaves no node in the queue.
func TestRunInterruptedWhileWaiting(t *testing.T) {
	root := zktest.UniqueRoot(t)
	holdWithWaiters(t, root, "line", "holder")
	c := client(t, root)
	ran := filepath.Join(t.TempDir(), "ran")
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "line", "--", "touch", ran)
	eventually(t, "run to queue", func() bool { return queueLen(t, c, "line") == 2 })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd); code != 128+15 || !strings.Contains(errb.String(), `interrupted by SIGTERM while waiting for the lock on "line"`) {
		t.Errorf("exit %d, stderr %q; want 143", code, errb.String())
	}
	if n := queueLen(t, c, "line"); n != 1 {
		t.Errorf("%d nodes in the queue, want only the holder's", n)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("CMD ran")
	}
}

// sleeper is a CMD that records the signals it gets in its first argument
// and runs until told to stop.
const sleeper = `f=$1
trap 'echo TERM >> "$f"; exit 7' TERM
trap 'echo USR1 >> "$f"' USR1
echo ready >> "$f"
while :; do sleep 0.05; done`

func TestRunForwardsSignals(t *testing.T) {
	root := zktest.UniqueRoot(t)
	f := filepath.Join(t.TempDir(), "signals")
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "sig", "--", "sh", "-c", "echo pid $$ >> \"$1\"\n"+sleeper, "sh", f)
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	// stdin is not a terminal: CMD leads a process group of its own
	if pid, pgrp := cmdGroup(t, f); pgrp != pid {
		t.Errorf("CMD (pid %d) is in process group %d, want its own", pid, pgrp)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	eventually(t, "CMD to get SIGUSR1", func() bool { return fileHas(f, "USR1") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// (sh may report on stderr that its sleep was terminated: the signal
	// goes to CMD's whole process group)
	if code := exitOf(t, cmd); code != 7 || strings.Contains(errb.String(), "zklock") {
		t.Errorf("exit %d, stderr %q; want CMD's 7 and nothing from zklock", code, errb.String())
	}
	if !fileHas(f, "TERM") {
		t.Error("CMD did not get SIGTERM")
	}
	if n := queueLen(t, client(t, root), "sig"); n != 0 {
		t.Errorf("%d lock nodes left", n)
	}
}

// TestRunLeaseLost: deleting the lease's node stops CMD with SIGTERM and
// zklock exits 114 whatever CMD's exit code.
func TestRunLeaseLost(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := client(t, root)
	f := filepath.Join(t.TempDir(), "signals")
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "lost", "--", "sh", "-c", sleeper, "sh", f)
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	deleteHolder(t, c, "lost")
	if code := exitOf(t, cmd); code != 114 {
		t.Errorf("exit %d, want 114", code)
	}
	if !fileHas(f, "TERM") {
		t.Error("CMD did not get SIGTERM")
	}
	if s := errb.String(); !strings.Contains(s, `lease on "lost" lost: node_deleted; sending SIGTERM to sh (SIGKILL after 10s)`) {
		t.Errorf("stderr %q", s)
	}
}

// TestRunLeaseLostKill: a CMD that ignores SIGTERM is killed after --grace.
func TestRunLeaseLostKill(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := client(t, root)
	f := filepath.Join(t.TempDir(), "signals")
	stubborn := `trap '' TERM; echo ready >> "$1"; while :; do sleep 0.05; done`
	cmd, _, errb := start(t, nil, "run", "--root", root, "--resource", "lost", "--grace", "300ms", "--", "sh", "-c", stubborn, "sh", f)
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	deleteHolder(t, c, "lost")
	if code := exitOf(t, cmd); code != 114 {
		t.Errorf("exit %d, want 114", code)
	}
	if s := errb.String(); !strings.Contains(s, "sh still running 300ms after SIGTERM; sending SIGKILL") {
		t.Errorf("stderr %q", s)
	}
}

// TestRunSessionLost: when ZooKeeper becomes unreachable, CMD is stopped
// before the session can expire and the lock go to someone else.
func TestRunSessionLost(t *testing.T) {
	root := zktest.UniqueRoot(t)
	proxy, err := zktest.NewProxy(zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	f := filepath.Join(t.TempDir(), "signals")
	cmd, _, errb := start(t, nil, "run", "--servers", proxy.Addr(), "--root", root, "--session-timeout", "4s",
		"--resource", "partition", "--", "sh", "-c", sleeper, "sh", f)
	eventually(t, "CMD to start", func() bool { return fileHas(f, "ready") })
	proxy.Blackhole(true)
	if code := exitOf(t, cmd); code != 114 {
		t.Errorf("exit %d, want 114; stderr %q", code, errb.String())
	}
	if !fileHas(f, "TERM") {
		t.Error("CMD did not get SIGTERM")
	}
	if s := errb.String(); !strings.Contains(s, "session_unverified") && !strings.Contains(s, "session_expired") {
		t.Errorf("stderr %q", s)
	}
}

// TestRunDigestAuth: with --user/--password the lease node is writable
// only by that identity.
func TestRunDigestAuth(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := client(t, root)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		env  []string
	}{
		{[]string{"--user", "alice", "--password", "secret"}, nil},
		{[]string{"--user", "alice"}, []string{"ZKLOCK_PASSWORD=secret"}},
	} {
		ready, done := filepath.Join(dir, "ready"), filepath.Join(dir, "done")
		os.Remove(ready)
		os.Remove(done)
		args := append(append([]string{"run", "--root", root, "--resource", "acl"}, tc.args...),
			"--", "sh", "-c", `touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done`, "sh", ready, done)
		cmd, _, errb := start(t, tc.env, args...)
		eventually(t, "CMD to start", func() bool { _, err := os.Stat(ready); return err == nil })
		q, err := c.Inspect(context.Background(), "acl")
		if err != nil || len(q.Nodes) != 1 {
			t.Fatalf("%v %+v", err, q)
		}
		acl, _, err := c.Conn().GetACL(q.Nodes[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range acl {
			// ZooKeeper hides the digest from readers without ADMIN: "alice:x"
			found = found || (a.Scheme == "digest" && strings.HasPrefix(a.ID, "alice:") && a.Perms == zk.PermAll)
			if a.Scheme == "world" && a.Perms&(zk.PermWrite|zk.PermDelete) != 0 {
				t.Errorf("%q: node ACL %+v lets anyone write or delete", tc.args, acl)
			}
		}
		if !found {
			t.Errorf("%q: node ACL %+v has no digest entry for alice", tc.args, acl)
		}
		if err := c.Conn().Delete(q.Nodes[0].Path, -1); err == nil {
			t.Errorf("%q: an unauthenticated client deleted the lease node", tc.args)
		}
		os.WriteFile(done, nil, 0o644)
		if code := exitOf(t, cmd); code != 0 {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, errb.String())
		}
	}
}

// deleteHolder deletes the node holding resource, as an operator might.
func deleteHolder(t *testing.T, c *zklock.Client, resource string) {
	t.Helper()
	q, err := c.Inspect(context.Background(), resource)
	if err != nil || len(q.Holders()) != 1 {
		t.Fatalf("inspect: %v %+v", err, q)
	}
	if err := c.Conn().Delete(q.Holders()[0].Path, -1); err != nil {
		t.Fatal(err)
	}
}
