// Command http is a small bank-account service run as two replicas in one
// process, with a load generator that shows what the zklock HTTP middleware
// is for: concurrent withdrawals from one account overdraw it without the
// lock, and never with it.
//
// The replicas share a deliberately racy balance store (read, pause,
// write). One serves with Echo (package zkecho), the other with the
// standard library's ServeMux (package middleware): the same resource
// template locks the same znode through both. Each has its own HTTP server
// on 127.0.0.1 and zklock Client, so the lock is taken across two ZooKeeper sessions, as it would
// be across two machines. The program sends the same burst of concurrent
// withdrawals to an unlocked route and to the locked one, prints a report
// and exits (status 1 if the locked route ever overdrew the account).
//
//	go run ./examples/http
//	ZKLOCK_SERVERS=127.0.0.1:2181 go run ./examples/http -requests 100
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

func main() {
	cfg := config{}
	flag.IntVar(&cfg.replicas, "replicas", 2, "service replicas, each with its own ZooKeeper session")
	flag.IntVar(&cfg.requests, "requests", 40, "concurrent withdrawals per phase")
	flag.IntVar(&cfg.balance, "balance", 100, "opening balance of the account")
	flag.IntVar(&cfg.amount, "amount", 10, "amount of each withdrawal")
	flag.DurationVar(&cfg.delay, "delay", 5*time.Millisecond, "pause between a withdrawal's read and its write")
	flag.Parse()
	if cfg.replicas < 1 || cfg.requests < 1 || cfg.balance < 0 || cfg.amount < 1 || cfg.delay < 0 {
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
	results, err := run(ctx, dsn, cfg)
	closeZK()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	report(os.Stdout, cfg, results)
	if !results[len(results)-1].consistent() {
		os.Exit(1)
	}
}

// run starts the replicas and sends the same burst of withdrawals to the
// unlocked route, then to the locked one.
func run(ctx context.Context, dsn string, cfg config) ([]result, error) {
	s := newStore(cfg.delay)
	var reps []*replica
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	for i := range cfg.replicas {
		// Every other replica runs on the standard library's ServeMux:
		// the Echo and net/http middleware lock the same resource.
		r, err := startReplica(ctx, dsn, s, i%2 == 1)
		if err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	id := fmt.Sprintf("%d", time.Now().UnixNano()) // fresh accounts on a shared ZooKeeper
	return []result{
		load(ctx, "without lock", "/unsafe/accounts/%s/withdraw", "u"+id, cfg, s, reps),
		load(ctx, "with lock", "/accounts/%s/withdraw", "l"+id, cfg, s, reps),
	}, nil
}

func report(w io.Writer, cfg config, results []result) {
	fmt.Fprintf(w, "%d replicas share one account store; opening balance %d;\n", cfg.replicas, cfg.balance)
	fmt.Fprintf(w, "%d concurrent withdrawals of %d spread over the replicas.\n\n", cfg.requests, cfg.amount)
	fmt.Fprintf(w, "%-14s %6s %8s %7s %8s %9s %10s %9s\n", "", "paid", "refused", "failed", "balance", "paid out", "overdraft", "time")
	for _, r := range results {
		fmt.Fprintf(w, "%-14s %6d %8d %7d %8d %9d %10d %9s\n", r.name, r.paid, r.refused, r.failed,
			r.balance, r.paidOut, r.overdraft(), r.elapsed.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	unlocked, locked := results[0], results[len(results)-1]
	if unlocked.overdraft() > 0 {
		fmt.Fprintf(w, "without the lock: overdrawn by %d (racing withdrawals read the same balance).\n", unlocked.overdraft())
	} else {
		fmt.Fprintln(w, "without the lock: no overdraft this time (the race is real but was not hit; try -delay 20ms).")
	}
	if locked.consistent() {
		fmt.Fprintln(w, "with the lock:    no overdraft; the balance adds up.")
	} else {
		fmt.Fprintf(w, "with the lock:    INCONSISTENT (statuses %v)\n", locked.statuses)
	}
}
