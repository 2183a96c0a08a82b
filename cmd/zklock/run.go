package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
	"github.com/zklockkit/zklockkit/zklock"
)

// DefaultGrace is how long "zklock run" waits after SIGTERM before it
// sends SIGKILL to a command whose lease was lost.
const DefaultGrace = 10 * time.Second

var runCommand = &command{
	name:    "run",
	args:    "RESOURCE [flags --] CMD [ARGS...]   (or: --resource R [flags] -- CMD [ARGS...])",
	summary: "run CMD while holding the lock on RESOURCE (a distributed flock)",
	help: `
Run acquires the lock on RESOURCE (waiting in line behind earlier callers),
runs CMD while holding it, releases it when CMD exits, and exits with CMD's
exit code. It is flock(1) across hosts: put it in front of a cron job on
every host and the job runs on one host at a time.

RESOURCE comes first, as in "etcdctl lock NAME CMD" and "flock FILE CMD";
flags may go before it, or between it and a "--" that starts CMD. Without
"--" every word after RESOURCE belongs to CMD. --resource R also works.

Modes: exclusive by default; --shared takes a read lock (shared with other
--shared runs and with zklock, Curator and kazoo read locks, excluded by
every writer and exclusive holder); --limit N is a semaphore of N holders
(every user of RESOURCE must give the same N).

Waiting: as long as it takes, by default; --wait D gives up after D (exit
112; 113 if no session could be made within D, ZooKeeper being away);
--try does not wait (exit 111 when the lock is held). --try never waits
on ZooKeeper either: while ZooKeeper is away it exits 113 within
min(session timeout/3, 1s), connecting included. --connect-timeout, when
given, bounds the connection instead, for both. -E N makes a busy --try or a
passed --wait exit N instead, as flock -E does (-E 0: "someone else is
doing it" counts as success).

CMD gets these environment variables:
  ZKLOCK_TOKEN     the fencing token (grows with every lease granted):
                   pass it to storage that should refuse stale writers
  ZKLOCK_RESOURCE  RESOURCE
  ZKLOCK_NODE      the znode of the lease

Signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to
zklock are forwarded to CMD. When stdin is not a terminal (cron, systemd,
scripts), CMD runs in its own process group and signals go to the whole
group, so the children of a shell script get them too. On a terminal CMD
stays in the foreground group, and SIGINT and SIGQUIT, which the terminal
already sends to CMD, are not sent twice. On Linux CMD is killed if zklock
itself dies.

If the lease is lost while CMD runs (someone deleted its node, e.g. with
"zklock break", the session expired, or ZooKeeper has been unreachable for
so long that the session may have expired), CMD is sent SIGTERM, then
SIGKILL after --grace, and zklock exits 114 whatever CMD's own exit code.

Examples:
  zklock run nightly-report --try -- /usr/local/bin/report.sh
  zklock run db-migrate --wait 5m --label "$HOSTNAME deploy" -- ./migrate up
  zklock run --shared reports/cache -- ./read-cache.sh
  zklock run --limit 3 render-farm -- ./render.sh frame-42
  zklock run -E 0 --try backup -- ./backup.sh      # cron: busy is fine

` + exitCodeTable,
	setup: func(fs *flag.FlagSet, cf *connFlags) func(*env, []string) error {
		o := &runOpts{cf: cf, fs: fs}
		fs.StringVar(&o.resource, "resource", "", "the resource to lock (instead of the RESOURCE argument)")
		duration.Var(fs, &o.wait, "wait", 0, "give up with exit code 112 when the lock is not acquired within this `duration` (default: wait as long as it takes)")
		fs.BoolVar(&o.try, "try", false, "do not wait: exit with code 111 at once when the lock is held, 113 when ZooKeeper does not answer within min(session timeout/3, 1s)")
		fs.BoolVar(&o.shared, "shared", false, "take a shared (read) lock: other --shared runs may hold it at the same time")
		fs.IntVar(&o.limit, "limit", 0, "take one of `N` slots of a semaphore: up to N runs hold it at once")
		fs.Var(&o.conflict, "conflict-exit-code", "exit `code` (0 to 255) when --try finds the lock held or --wait passes (default 111 and 112), as flock -E")
		fs.Var(&o.conflict, "E", "short for --conflict-exit-code `code`")
		duration.Var(fs, &o.grace, "grace", DefaultGrace, "after a lost lease, the time (`duration`) between SIGTERM and SIGKILL to CMD")
		fs.BoolVar(&o.raw, "raw", false, "the resource is a raw znode path, e.g. /locks/foo of a Curator or kazoo service")
		return o.run
	},
}

// runOpts are the flags of "zklock run".
type runOpts struct {
	cf       *connFlags
	fs       *flag.FlagSet
	resource string
	wait     time.Duration
	try      bool
	shared   bool
	limit    int
	conflict exitCodeFlag
	grace    time.Duration
	raw      bool
	// releaseTimeout bounds the release after CMD (--connect-timeout,
	// also under --try, whose bound applies to the acquire).
	releaseTimeout time.Duration
	// missingCmd says what is missing when no CMD follows, in the words
	// of what was typed (set by command).
	missingCmd string
}

// forwarded are the signals passed on to CMD; the first four end zklock
// while it is still waiting for the lock.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// command splits the positional arguments into RESOURCE (unless
// --resource gave it) and CMD, parsing any flags between RESOURCE and "--".
func (o *runOpts) command(e *env, args []string) ([]string, error) {
	o.missingCmd = "missing CMD after --"
	if isSet(o.fs, "resource") {
		if !e.dashed {
			o.missingCmd = fmt.Sprintf("missing CMD after --resource %q: zklock run --resource R [flags] -- CMD [ARGS...]", o.resource)
		}
		return args, nil
	}
	if len(args) == 0 || e.dashed {
		return nil, usageErrorf("run", "missing RESOURCE: zklock run RESOURCE -- CMD (or --resource R -- CMD)")
	}
	o.resource, args = args[0], args[1:]
	i := slices.Index(args, "--")
	if i < 0 {
		// etcdctl's form: every word after RESOURCE is CMD
		o.missingCmd = fmt.Sprintf("missing CMD after RESOURCE %q: zklock run RESOURCE [flags --] CMD [ARGS...]", o.resource)
		return args, nil
	}
	if i > 0 {
		extra, err := parseArgs(o.fs, args[:i], false)
		if err != nil {
			return nil, usageErrorf("run", "%v", err)
		}
		if len(extra) > 0 {
			return nil, usageErrorf("run", "unexpected %q between RESOURCE and --: only flags go there", extra[0])
		}
	}
	return args[i+1:], nil
}

func (o *runOpts) validate(args []string) error {
	switch {
	case o.resource == "":
		return usageErrorf("run", "missing RESOURCE: zklock run RESOURCE -- CMD (or --resource R -- CMD)")
	case len(args) == 0:
		return usageErrorf("run", "%s", o.missingCmd)
	case o.try && isSet(o.fs, "wait"):
		return usageErrorf("run", "--try and --wait exclude each other")
	case isSet(o.fs, "wait") && o.wait <= 0:
		return usageErrorf("run", "bad --wait %v: must be positive (use --try not to wait)", o.wait)
	case o.shared && isSet(o.fs, "limit"):
		return usageErrorf("run", "--shared and --limit exclude each other: a semaphore's holders all count alike")
	case isSet(o.fs, "limit") && o.limit < 1:
		return usageErrorf("run", "bad --limit %d: must be at least 1", o.limit)
	case o.grace < 0:
		return usageErrorf("run", "bad --grace %v: must not be negative", o.grace)
	case o.raw && !strings.HasPrefix(o.resource, "/"):
		return usageErrorf("run", "bad raw path %q: must be an absolute znode path such as /locks/foo", o.resource)
	case args[0] == "":
		return usageErrorf("run", "bad CMD \"\": an empty command name")
	}
	if !o.raw {
		if err := zklock.ValidateResource(o.resource); err != nil {
			return usageErrorf("run", "%s", errText(err))
		}
	}
	return nil
}

// TryBound is how long "zklock run --try" waits on ZooKeeper at most,
// connecting included, for a session timeout of d: min(d/3, 1s), the bound
// of every try (see package zklock's Liveness section).
func TryBound(d time.Duration) time.Duration { return min(d/3, time.Second) }

// conflictCode is the exit code for a busy --try or a passed --wait.
func (o *runOpts) conflictCode(def int) int {
	if o.conflict.set {
		return o.conflict.code
	}
	return def
}

// exitCodeFlag is the value of -E/--conflict-exit-code: an exit code, or
// unset.
type exitCodeFlag struct {
	code int
	set  bool
}

func (f *exitCodeFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(f.code)
}

func (f *exitCodeFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 {
		return errors.New("must be an exit code from 0 to 255")
	}
	f.code, f.set = n, true
	return nil
}

func (o *runOpts) run(e *env, args []string) error {
	args, err := o.command(e, args)
	if err != nil {
		return err
	}
	if err := o.validate(args); err != nil {
		return err
	}
	if _, err := o.cf.validate("run"); err != nil {
		return err
	}
	o.releaseTimeout = o.cf.connectTimeout
	if o.try && !isSet(o.fs, "connect-timeout") {
		// a try never waits on ZooKeeper past its bound: connecting neither
		st := zklock.DefaultSessionTimeout
		if isSet(o.fs, "session-timeout") {
			st = o.cf.sessionTimeout
		}
		o.cf.connectTimeout = TryBound(st)
		o.cf.timeoutName = "the --try bound"
	}
	if o.wait > 0 && o.wait < o.cf.connectTimeout && !isSet(o.fs, "connect-timeout") {
		// nor does a wait: --wait D gives up after D, connecting included
		o.cf.connectTimeout = o.wait
		o.cf.timeoutName = "--wait"
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	lease, c, err := o.acquire(sigs, args)
	if c != nil {
		defer c.Close()
	}
	if err != nil {
		return err
	}
	return o.supervise(e, sigs, lease, args)
}

// acquire connects and takes the lock; a terminating signal meanwhile
// gives up with exit code 128+N.
func (o *runOpts) acquire(sigs chan os.Signal, args []string) (*zklock.Lease, *zklock.Client, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan os.Signal, 1)
	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGUSR1 || s == syscall.SIGUSR2 {
					continue // for CMD, which is not running yet
				}
				got <- s
				cancel()
				return
			case <-stop:
				return
			}
		}
	}()
	var once bool
	stopSignals := func() {
		if !once {
			once = true
			close(stop)
			<-stopped
		}
	}
	defer stopSignals()
	interrupted := func(what string) error {
		s := (<-got).(syscall.Signal)
		return withCode(ExitSignalBase+int(s), fmt.Errorf("interrupted by %s while %s", signalName(s), what))
	}

	c, err := o.cf.open(ctx, "run")
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, interrupted("connecting to ZooKeeper")
		}
		return nil, nil, err
	}
	var opts []zklock.AcquireOption
	if o.raw {
		opts = append(opts, zklock.RawPath())
	}
	if o.try {
		opts = append(opts, zklock.Try())
	}
	if o.wait > 0 {
		opts = append(opts, zklock.MaxWait(o.wait))
	}
	switch {
	case o.shared:
		opts = append(opts, zklock.Read)
	case o.limit > 0:
		opts = append(opts, zklock.Limit(o.limit))
	}
	if o.cf.label == "" && !strings.Contains(o.cf.dsn(), "label=") {
		opts = append(opts, zklock.LeaseLabel(filepath.Base(args[0])))
	}
	lease, err := c.Acquire(ctx, o.resource, opts...)
	stopSignals() // from here on signals are CMD's, or wait in sigs for it
	switch {
	case err == nil && ctx.Err() != nil:
		// a signal came just as the lock was granted: do not start CMD
		o.release(nil, lease)
		return nil, c, interrupted(fmt.Sprintf("acquiring the lock on %q", o.resource))
	case err == nil:
		return lease, c, nil
	case ctx.Err() != nil:
		return nil, c, interrupted(fmt.Sprintf("waiting for the lock on %q", o.resource))
	case errors.Is(err, zklock.ErrLocked):
		return nil, c, withCode(o.conflictCode(ExitBusy), fmt.Errorf("%q is busy%s (--try)", o.resource, o.holder(c)))
	case errors.Is(err, zklock.ErrWaitTimeout):
		return nil, c, withCode(o.conflictCode(ExitTimeout), fmt.Errorf("gave up waiting for the lock on %q after %v (--wait)%s", o.resource, o.wait, o.holder(c)))
	case errors.Is(err, zklock.ErrLimitMismatch):
		return nil, c, usageErrorf("run", "bad --limit %d: %s", o.limit, errText(err))
	case errors.Is(err, zklock.ErrUnavailable):
		return nil, c, withCode(ExitUnreachable, err)
	}
	return nil, c, err
}

// holder names who holds the resource, for a busy or timeout message.
func (o *runOpts) holder(c *zklock.Client) string {
	ctx, cancel := context.WithTimeout(context.Background(), min(2*time.Second, o.cf.connectTimeout))
	defer cancel()
	var opts []zklock.QueueOption
	if o.raw {
		opts = append(opts, zklock.RawPath())
	}
	if o.limit > 0 {
		opts = append(opts, zklock.Limit(o.limit))
	}
	q, err := c.Inspect(ctx, o.resource, opts...)
	if err != nil || len(q.Holders()) == 0 {
		return ""
	}
	h := q.Holders()[0]
	return fmt.Sprintf(": held by %s for %s, %d waiting", ownerText(h.Owner), formatAge(time.Since(h.Created)), len(q.Waiters()))
}

// supervise runs CMD under the lease and returns its outcome.
func (o *runOpts) supervise(e *env, sigs chan os.Signal, lease *zklock.Lease, args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.Env = append(os.Environ(),
		"ZKLOCK_TOKEN="+strconv.FormatInt(lease.Token(), 10),
		"ZKLOCK_RESOURCE="+o.resource,
		"ZKLOCK_NODE="+lease.Path())
	group := !isTerminal(e.stdin)
	cmd.SysProcAttr = sysProcAttr(group)
	cmd.WaitDelay = time.Second // do not hang on pipes kept open by CMD's children
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		// The parent-death signal (Linux) is tied to the thread that
		// starts the child: keep this goroutine on it until CMD is gone.
		// The thread is not unlocked, so it ends with the goroutine.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		o.release(e, lease)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return withCode(ExitNotFound, fmt.Errorf("%s: command not found", args[0]))
		}
		return withCode(ExitCannotRun, fmt.Errorf("cannot run %s: %v", args[0], err))
	}
	name := filepath.Base(args[0])
	send := func(s syscall.Signal) {
		if group {
			_ = syscall.Kill(-cmd.Process.Pid, s)
		} else {
			_ = cmd.Process.Signal(s)
		}
	}
	var (
		waitErr   error
		lost      error
		leaseDone = lease.Done()
		graceC    <-chan time.Time
	)
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case s := <-sigs:
			if !group && (s == syscall.SIGINT || s == syscall.SIGQUIT) {
				continue // the terminal sent it to CMD as well
			}
			send(s.(syscall.Signal))
		case <-leaseDone:
			leaseDone = nil
			lost = lease.Err()
			fmt.Fprintf(e.stderr, "zklock run: %s; sending SIGTERM to %s (SIGKILL after %v)\n", errText(lost), name, o.grace)
			send(syscall.SIGTERM)
			t := time.NewTimer(o.grace)
			defer t.Stop()
			graceC = t.C
		case <-graceC:
			graceC = nil
			fmt.Fprintf(e.stderr, "zklock run: %s still running %v after SIGTERM; sending SIGKILL\n", name, o.grace)
			send(syscall.SIGKILL)
		}
	}
	if lost == nil && errors.Is(lease.Err(), zklock.ErrLeaseLost) {
		lost = lease.Err()
		fmt.Fprintf(e.stderr, "zklock run: %s as %s finished\n", errText(lost), name)
	}
	if lost != nil {
		return withCode(ExitLeaseLost, nil)
	}
	o.release(e, lease)
	if code := exitCode(cmd, waitErr); code != 0 {
		return withCode(code, nil)
	}
	return nil
}

// release gives the lock back, warning when ZooKeeper did not confirm
// (the node still goes when the session closes).
func (o *runOpts) release(e *env, lease *zklock.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), o.releaseTimeout)
	defer cancel()
	if err := lease.Release(ctx); err != nil && e != nil {
		fmt.Fprintf(e.stderr, "zklock run: warning: %s; the lock node goes when the session closes\n", errText(err))
	}
}

// exitCode is CMD's exit code as a shell reports it (128+N when killed by
// signal N).
func exitCode(cmd *exec.Cmd, err error) int {
	ps := cmd.ProcessState
	if ps == nil {
		if err != nil {
			return ExitError
		}
		return 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitSignalBase + int(ws.Signal())
	}
	return ps.ExitCode()
}

// signalName is "SIGTERM" for syscall.SIGTERM.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}
