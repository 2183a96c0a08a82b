package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/zklockkit/zklockkit/examples/grpc/bankpb"
	"github.com/zklockkit/zklockkit/interceptor"
)

// result is what the hammer saw, and what the ledger holds afterwards.
type result struct {
	calls    int
	ok       int
	deposits int // Deposit streams among the ok calls
	// the Watch stream on account a: whether it saw the final balance, how
	// many balances it got, and what a second watcher was told
	watched      bool
	watchUpdates int
	secondWatch  string
	statuses     map[string]int // failed calls by status code
	waits        []time.Duration
	elapsed      time.Duration
	expected     map[string]int64 // balances implied by the transfers that succeeded
	actual       map[string]int64
}

func (r *result) consistent() bool {
	if !r.watched {
		return false
	}
	for a, want := range r.expected {
		if r.actual[a] != want {
			return false
		}
	}
	return true
}

// hammer sends cfg.calls transfers between random accounts, spread over the
// replicas, cfg.concurrency at a time, and prints each call's lock wait.
func hammer(ctx context.Context, cfg config, prefix string, reps []*replica, l *ledger, w io.Writer) *result {
	res := &result{calls: cfg.calls, statuses: map[string]int{}, expected: map[string]int64{}, actual: map[string]int64{}}
	for i := range cfg.accounts {
		a := account(prefix, i)
		res.expected[a], _ = l.get(a)
	}
	var mu sync.Mutex // res, and w
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range cfg.concurrency {
		wg.Go(func() {
			for n := range jobs {
				from := rand.IntN(cfg.accounts)
				to := (from + 1 + rand.IntN(cfg.accounts-1)) % cfg.accounts
				amount := int64(1 + rand.IntN(10))
				rep := reps[n%len(reps)]
				if n%4 == 3 { // every fourth call: a stream of three deposits
					wait, err := deposit(ctx, rep, account(prefix, from), amount)
					mu.Lock()
					res.waits = append(res.waits, wait)
					line := fmt.Sprintf("#%-4d %s  deposit → %c  3×%d  waited %8.3fms", n+1, rep.name, 'a'+from, amount,
						float64(wait.Microseconds())/1000)
					if err == nil {
						res.ok++
						res.deposits++
						res.expected[account(prefix, from)] += 3 * amount
					} else {
						res.statuses[status.Code(err).String()]++
						line += "  " + status.Code(err).String()
					}
					if !cfg.quiet {
						fmt.Fprintln(w, line)
					}
					mu.Unlock()
					continue
				}
				req := &bankpb.TransferRequest{AccountId: account(prefix, from), Transfer: &bankpb.Transfer{
					From: account(prefix, from), To: account(prefix, to), Amount: amount}}
				var trailer metadata.MD
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				resp, err := rep.client.Transfer(cctx, req, grpc.Trailer(&trailer))
				cancel()
				wait, _ := interceptor.WaitFromTrailer(trailer)

				mu.Lock()
				res.waits = append(res.waits, wait)
				if err == nil {
					res.ok++
					res.expected[req.Transfer.From] -= amount
					res.expected[req.Transfer.To] += amount
				} else {
					res.statuses[status.Code(err).String()]++
				}
				if !cfg.quiet {
					line := fmt.Sprintf("#%-4d %s  %c → %c  %2d  waited %8.3fms", n+1, rep.name,
						'a'+from, 'a'+to, amount, float64(wait.Microseconds())/1000)
					if err == nil {
						line += fmt.Sprintf("  token %d", resp.GetFencingToken())
					} else {
						line += "  " + status.Code(err).String()
					}
					fmt.Fprintln(w, line)
				}
				mu.Unlock()
			}
		})
	}
	for n := range cfg.calls {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	res.elapsed = time.Since(start)
	for a := range res.expected {
		res.actual[a], _ = l.get(a)
	}
	return res
}

// deposit sends three deposits of amount to acct in one Deposit stream
// (locked as a whole by the interceptor) and returns the lock wait.
func deposit(ctx context.Context, rep *replica, acct string, amount int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := rep.client.Deposit(ctx)
	if err != nil {
		return 0, err
	}
	for range 3 {
		if err := stream.Send(&bankpb.DepositRequest{AccountId: acct, Amount: amount}); err != nil {
			break // the status comes with CloseAndRecv
		}
	}
	_, err = stream.CloseAndRecv()
	wait, _ := interceptor.WaitFromTrailer(stream.Trailer())
	return wait, err
}

func (r *result) report(w io.Writer) {
	ws := slices.Clone(r.waits)
	slices.Sort(ws)
	q := func(p float64) string {
		if len(ws) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3fms", float64(ws[int(p*float64(len(ws)-1))].Microseconds())/1000)
	}
	fmt.Fprintf(w, "\n%d calls in %v: %d ok (%d of them Deposit streams)", r.calls, r.elapsed.Round(time.Millisecond), r.ok, r.deposits)
	for code, n := range r.statuses {
		fmt.Fprintf(w, ", %d %s", n, code)
	}
	fmt.Fprintf(w, "\nlock wait (zklock-wait-ms trailer): p50 %s  p90 %s  max %s\n", q(0.5), q(0.9), q(1))
	accts := make([]string, 0, len(r.expected))
	for a := range r.expected {
		accts = append(accts, a)
	}
	slices.Sort(accts)
	for _, a := range accts {
		mark := "ok"
		if r.actual[a] != r.expected[a] {
			mark = "LOST UPDATE"
		}
		fmt.Fprintf(w, "  account %c: balance %5d, expected %5d  %s\n", a[len(a)-1], r.actual[a], r.expected[a], mark)
	}
	fmt.Fprintf(w, "watch on account a: %d balances streamed, the final one seen: %v\n", r.watchUpdates, r.watched)
	if r.consistent() {
		fmt.Fprintln(w, "every balance adds up: no transfer or deposit overlapped another on the same account.")
	} else {
		fmt.Fprintln(w, "INCONSISTENT: some transfers overlapped.")
	}
}

// watcher follows one account's Watch stream.
type watcher struct {
	second string // what a second watcher on another replica was told
	mu     sync.Mutex
	seen   []int64
	bump   chan struct{}
}

// startWatch opens a Watch of acct on the first replica and, once it holds
// its lock (its first balance arrived), tries a second one on the last
// replica, which the lock refuses at once (Try).
func startWatch(ctx context.Context, reps []*replica, acct string) (*watcher, error) {
	stream, err := reps[0].client.Watch(ctx, &bankpb.WatchRequest{AccountId: acct})
	if err != nil {
		return nil, err
	}
	first, err := stream.Recv()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", acct, err)
	}
	w := &watcher{seen: []int64{first.GetBalance()}, bump: make(chan struct{}, 1)}
	go func() {
		for {
			ev, err := stream.Recv()
			if err != nil {
				return
			}
			w.mu.Lock()
			w.seen = append(w.seen, ev.GetBalance())
			w.mu.Unlock()
			select {
			case w.bump <- struct{}{}:
			default:
			}
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	other, err := reps[len(reps)-1].client.Watch(cctx, &bankpb.WatchRequest{AccountId: acct})
	if err == nil {
		_, err = other.Recv()
	}
	if err == nil {
		w.second = "allowed (two watchers)"
	} else {
		w.second = status.Code(err).String() + " (one watcher per account)"
	}
	return w, nil
}

// until waits for the stream to deliver balance, and reports whether it
// did within d.
func (w *watcher) until(balance int64, d time.Duration) bool {
	deadline := time.After(d)
	for {
		w.mu.Lock()
		last := w.seen[len(w.seen)-1]
		w.mu.Unlock()
		if last == balance {
			return true
		}
		select {
		case <-w.bump:
		case <-deadline:
			return false
		}
	}
}

func (w *watcher) updates() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}
