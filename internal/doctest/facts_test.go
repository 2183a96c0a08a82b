package doctest_test

import (
	"context"
	"go/constant"
	"go/types"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/interceptor"
	"github.com/zklockkit/zklockkit/internal/doctest"
	"github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
)

const dur = `(\d+(?:\.\d+)? ?m?s)`

// load returns the repository's root and its pages.
func load(t *testing.T) (root string, pages []doctest.Page) {
	t.Helper()
	root, err := doctest.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	if pages, err = doctest.Pages(root); err != nil {
		t.Fatal(err)
	}
	return root, pages
}

func fact(name, source, quote string, want ...any) doctest.Fact {
	return doctest.Fact{Name: name, Source: source, Quote: regexp.MustCompile(quote), Want: want}
}

// TestDocFacts checks the exit codes, status codes and defaults that
// README.md and docs/*.md quote against the code of the CLI and the
// adapters (zklock's own bounds are checked by its TestDocBounds). The
// CLI's exit codes are constants of a main package, read with the type
// checker; the adapters' answers are those of their own code for each
// error.
func TestDocFacts(t *testing.T) {
	root, pages := load(t)
	cli := constants(t, root, "github.com/zklockkit/zklockkit/cmd/zklock")
	integer := func(name string) int64 {
		v := cli[name]
		if v == nil || v.Kind() != constant.Int {
			t.Fatalf("cmd/zklock has no integer constant %s", name)
		}
		n, _ := constant.Int64Val(v)
		return n
	}
	exit := func(name string) int { return int(integer(name)) }
	d := integer("DefaultConnectTimeout")
	gate, _ := constant.Int64Val(constants(t, root, "github.com/zklockkit/zklockkit/zklock/internal/wire")["SetWatchesWait"])
	quick, _ := constant.Int64Val(constants(t, root, "github.com/zklockkit/zklockkit/zklock/internal/dsn")["QuickRedialAfter"])
	http := func(err error) int { return middleware.AnswerFor(err).Status }
	rpc := grpcCodes(t)
	if http(zklock.ErrWaitTimeout) != http(zklock.ErrUnavailable) {
		t.Errorf("README answers a passed wait and an unreachable ZooKeeper with one status; the middleware gives %d and %d",
			http(zklock.ErrWaitTimeout), http(zklock.ErrUnavailable))
	}

	facts := []doctest.Fact{
		// The CLI's exit codes, in the table of docs/operations.md and in
		// the prose around it.
		fact("the exit code of a command that succeeded", "cmd/zklock ExitOK", `\| (\d+) \| CMD exited 0 \|`, exit("ExitOK")),
		fact("the exit code of any other error", "cmd/zklock ExitError", `\| (\d+) \| other error`, exit("ExitError")),
		fact("the exit code of a usage error", "cmd/zklock ExitUsage", `\| (\d+) \| usage error \|`, exit("ExitUsage")),
		fact("the exit code of a usage error", "cmd/zklock ExitUsage", `bad --servers \(from \$ZKLOCK_SERVERS\):\x60\) and exits (\d+)`, exit("ExitUsage")),
		fact("the exit code of a busy --try", "cmd/zklock ExitBusy", `\| (\d+) \| \x60--try\x60: the lock is held`, exit("ExitBusy")),
		fact("the exit code of a busy --try", "cmd/zklock ExitBusy", `\(exit (\d+) when busy\)`, exit("ExitBusy")),
		fact("the exit code of a passed --wait", "cmd/zklock ExitTimeout", `\| (\d+) \| \x60--wait\x60 passed`, exit("ExitTimeout")),
		fact("the exit code of a passed --wait", "cmd/zklock ExitTimeout", `gives up after D \(exit (\d+)\)`, exit("ExitTimeout")),
		fact("the exit code of an unreachable ZooKeeper", "cmd/zklock ExitUnreachable", `\| (\d+) \| ZooKeeper unavailable`, exit("ExitUnreachable")),
		fact("the exit code of an unreachable ZooKeeper", "cmd/zklock ExitUnreachable", `exit (\d+) when no session is had in time`, exit("ExitUnreachable")),
		fact("the exit code of an unreachable ZooKeeper", "cmd/zklock ExitUnreachable", `while ZooKeeper is away it exits (\d+)`, exit("ExitUnreachable")),
		fact("the exit code of a lost lease", "cmd/zklock ExitLeaseLost", `\| (\d+) \| the lease was lost`, exit("ExitLeaseLost")),
		fact("the exit code of a lost lease", "cmd/zklock ExitLeaseLost", `stops its CMD and exits (\d+)`, exit("ExitLeaseLost")),
		fact("the exit code of a refused break", "cmd/zklock ExitError", `Anyone else gets exit (\d+)`, exit("ExitError")),
		fact("the default --connect-timeout", "cmd/zklock DefaultConnectTimeout", `\x60--connect-timeout\x60 \(default `+dur, time.Duration(d)),

		// The adapters' answers: docs/adapters.md's table, README's summary.
		fact("the answers to ErrLocked", "middleware.AnswerFor, the interceptor", `\| \x60zklock.ErrLocked\x60 \(Try\) \| (\d+) [^|]*\| \x60(\w+)\x60`,
			http(zklock.ErrLocked), rpc[zklock.ErrLocked].String()),
		fact("the answers to ErrWaitTimeout", "middleware.AnswerFor, the interceptor", `\| \x60zklock.ErrWaitTimeout\x60 \(MaxWait\) \| (\d+) [^|]*\| \x60(\w+)\x60`,
			http(zklock.ErrWaitTimeout), rpc[zklock.ErrWaitTimeout].String()),
		fact("the answers to ErrUnavailable", "middleware.AnswerFor, the interceptor", `\| \x60zklock.ErrUnavailable\x60, \x60ErrClosed\x60 \| (\d+) [^|]*\| \x60(\w+)\x60`,
			http(zklock.ErrUnavailable), rpc[zklock.ErrUnavailable].String()),
		fact("the answers to ErrInvalidResource", "middleware.AnswerFor, the interceptor", `\| \x60zklock.ErrInvalidResource\x60 \| (\d+)(?:, saying why)? \| \x60(\w+)\x60`,
			http(zklock.ErrInvalidResource), rpc[zklock.ErrInvalidResource].String()),
		fact("the answers to ErrInvalidResource", "middleware.AnswerFor, the interceptor", `HTTP answers (\d+) with that reason, [^;]*; gRPC\s+answers \x60(\w+)\x60`,
			http(zklock.ErrInvalidResource), rpc[zklock.ErrInvalidResource].String()),
		fact("the HTTP answer to a lost lease", "middleware.AnswerFor", `\| lease lost while the handler ran \| (\d+)`, http(zklock.ErrLeaseLost)),
		fact("the HTTP answers in the README", "middleware.AnswerFor", `busy answers (\d+), a passed wait or an unreachable ZooKeeper (\d+) \(both with \x60Retry-After\x60\), a bad key (\d+)`,
			http(zklock.ErrLocked), http(zklock.ErrWaitTimeout), http(zklock.ErrInvalidResource)),
		fact("the HTTP answer to a busy try", "middleware.AnswerFor", `busy: (\d+) \+ Retry-After`, http(zklock.ErrLocked)),
		fact("the gRPC answer to a busy try", "the interceptor", `busy is \x60(\w+)\x60 with \x60RetryInfo\x60`, rpc[zklock.ErrLocked].String()),

		// The reconnection gate's bound (zklock/internal/wire's SetWatchesWait).
		fact("the reconnection gate's bound", "zklock/internal/wire SetWatchesWait", `until go-zookeeper has written \x60setWatches\x60, at most `+dur+` after the connect response`, time.Duration(gate)),
		fact("the reconnection gate's bound", "zklock/internal/wire SetWatchesWait", `which orders the two, or for at most `+dur+` after the connect response`, time.Duration(gate)),

		// How long a connection to a lone server lives before its drop is
		// redialled at once (zklock/internal/dsn's QuickRedialAfter).
		fact("the quick redial's threshold", "zklock/internal/dsn QuickRedialAfter", `its only server at once if the connection had lived `+dur+` or more`, time.Duration(quick)),

		// Defaults of the adapters.
		fact("the client interceptor's longest retry delay", "interceptor.DefaultMaxRetryDelay", `capped by \x60WithMaxRetryDelay\x60, default `+dur, interceptor.DefaultMaxRetryDelay),
	}
	for _, p := range doctest.Check(pages, facts) {
		t.Error(p)
	}

	// Every exit code the prose names is one of the CLI's.
	exitCodes := map[int]bool{}
	for name, v := range cli {
		if strings.HasPrefix(name, "Exit") && v.Kind() == constant.Int {
			exitCodes[exit(name)] = true
		}
	}
	anyExit := regexp.MustCompile(`\bexits? (?:code )?(\d+)\b`)
	for _, p := range pages {
		for i, line := range p.Lines {
			for _, m := range anyExit.FindAllStringSubmatch(line, -1) {
				if n, _ := strconv.Atoi(m[1]); !exitCodes[n] {
					t.Errorf("%s:%d: %q: the CLI has no exit code %d (cmd/zklock/exitcode.go)", p.Path, i+1, m[0], n)
				}
			}
		}
	}
}

// constants returns the constants of the package at path, by name,
// unexported ones and those of a main package included.
func constants(t *testing.T, root, path string) map[string]constant.Value {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root}, path)
	if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil {
		t.Fatalf("load %s: %v", path, err)
	}
	out := map[string]constant.Value{}
	scope := pkgs[0].Types.Scope()
	for _, name := range scope.Names() {
		if c, ok := scope.Lookup(name).(*types.Const); ok {
			out[name] = c.Val()
		}
	}
	return out
}

// errLocker fails every acquire with its error: what a Locker answers
// when ZooKeeper is away, the lock busy, and so on.
type errLocker struct{ err error }

func (l errLocker) Acquire(context.Context, string, ...zklock.AcquireOption) (*zklock.Lease, error) {
	return nil, l.err
}

func (l errLocker) AcquireAll(context.Context, []string, ...zklock.AcquireOption) (*zklock.Lease, error) {
	return nil, l.err
}

// grpcCodes returns the status code the unary server interceptor answers
// a call with when the acquire fails with each of zklock's errors.
func grpcCodes(t *testing.T) map[error]codes.Code {
	t.Helper()
	out := map[error]codes.Code{}
	for _, err := range []error{zklock.ErrLocked, zklock.ErrWaitTimeout, zklock.ErrUnavailable, zklock.ErrClosed, zklock.ErrInvalidResource} {
		const method = "/doc.Svc/Call"
		in := interceptor.UnaryServerInterceptor(errLocker{err}, interceptor.WithMethod(method))
		_, got := in(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: method}, func(context.Context, any) (any, error) {
			t.Errorf("the handler ran though the acquire failed with %v", err)
			return nil, nil
		})
		out[err] = status.Code(got)
	}
	if !slices.Contains([]codes.Code{out[zklock.ErrClosed]}, out[zklock.ErrUnavailable]) {
		t.Errorf("docs/adapters.md answers ErrUnavailable and ErrClosed alike; the interceptor gives %v and %v", out[zklock.ErrUnavailable], out[zklock.ErrClosed])
	}
	return out
}
