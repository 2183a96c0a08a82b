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
	statuses map[string]int // failed calls by status code
	waits    []time.Duration
	elapsed  time.Duration
	expected map[string]int64 // balances implied by the transfers that succeeded
	actual   map[string]int64
}

func (r *result) consistent() bool {
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

func (r *result) report(w io.Writer) {
	ws := slices.Clone(r.waits)
	slices.Sort(ws)
	q := func(p float64) string {
		if len(ws) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3fms", float64(ws[int(p*float64(len(ws)-1))].Microseconds())/1000)
	}
	fmt.Fprintf(w, "\n%d calls in %v: %d ok", r.calls, r.elapsed.Round(time.Millisecond), r.ok)
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
	if r.consistent() {
		fmt.Fprintln(w, "every balance adds up: no transfer overlapped another on the same account.")
	} else {
		fmt.Fprintln(w, "INCONSISTENT: some transfers overlapped.")
	}
}
