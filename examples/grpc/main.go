// Command grpc runs the bank.v1.Bank gRPC service as two replicas in one
// process, each with its own zklock Client (its own ZooKeeper session, as
// two machines would have), and a client that hammers Transfer across both
// replicas, printing how long each call waited for its lock (the
// zklock-wait-ms trailer).
//
// Transfer runs under interceptor.UnaryServerInterceptor with the locks of
// both accounts it touches ("accounts/{transfer.from}" and
// "accounts/{transfer.to}", taken all or nothing in a canonical order, so
// a→b and b→a cannot deadlock). The replicas share a deliberately racy
// ledger (read, pause, write): without the locks, concurrent transfers
// lose updates. At the end the program checks every balance against the
// transfers that succeeded and exits (status 1 if they disagree).
//
//	go run ./examples/grpc
//	ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/grpc -calls 500 -accounts 8
//
// Without ZKLOCK_SERVERS it starts a throwaway ZooKeeper server (needs the
// Debian zookeeper package; see package zktest).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/zklockkit/zklockkit/internal/zkenv/zkstart"
)

type config struct {
	replicas    int
	calls       int
	concurrency int
	accounts    int
	delay       time.Duration
	quiet       bool
}

func main() {
	cfg := config{}
	flag.IntVar(&cfg.replicas, "replicas", 2, "service replicas, each with its own ZooKeeper session")
	flag.IntVar(&cfg.calls, "calls", 100, "Transfer calls to send")
	flag.IntVar(&cfg.concurrency, "concurrency", 8, "calls in flight at once")
	flag.IntVar(&cfg.accounts, "accounts", 4, "accounts to move money between")
	flag.DurationVar(&cfg.delay, "delay", 2*time.Millisecond, "pause between a transfer's read and its write")
	flag.BoolVar(&cfg.quiet, "q", false, "print only the summary, not every call")
	flag.Parse()
	if cfg.replicas < 1 || cfg.calls < 1 || cfg.concurrency < 1 || cfg.accounts < 2 || cfg.delay < 0 {
		fmt.Fprintln(os.Stderr, "bad flag value")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	dsn, closeZK, err := zkstart.ServersOrStart(os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	res, err := run(ctx, dsn, cfg, os.Stdout)
	closeZK()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !res.consistent() {
		os.Exit(1)
	}
}

// run starts the replicas, hammers them and reports to w.
func run(ctx context.Context, dsn string, cfg config, w io.Writer) (*result, error) {
	l := newLedger(cfg.delay)
	prefix := fmt.Sprintf("demo%d-", time.Now().UnixNano()) // fresh accounts on a shared ZooKeeper
	for i := range cfg.accounts {
		l.open(account(prefix, i), 1000)
	}
	var reps []*replica
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	for i := range cfg.replicas {
		r, err := startReplica(ctx, dsn, l, fmt.Sprintf("replica-%d", i+1))
		if err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	fmt.Fprintf(w, "%d replicas of bank.v1.Bank; %d calls (Transfer, and a Deposit stream every fourth), %d at a time, between %d accounts\n",
		cfg.replicas, cfg.calls, cfg.concurrency, cfg.accounts)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watch, err := startWatch(wctx, reps, account(prefix, 0))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "watching account a on %s; a second watcher on %s: %s\n\n", reps[0].name, reps[len(reps)-1].name, watch.second)
	res := hammer(ctx, cfg, prefix, reps, l, w)
	final, _ := l.get(account(prefix, 0))
	res.watched, res.watchUpdates = watch.until(final, 10*time.Second), watch.updates()
	res.secondWatch = watch.second
	res.report(w)
	return res, nil
}

func account(prefix string, i int) string { return fmt.Sprintf("%s%c", prefix, 'a'+i) }
