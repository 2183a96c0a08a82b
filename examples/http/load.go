package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// config is one run of the demo.
type config struct {
	replicas int           // service instances, each with its own ZooKeeper session
	requests int           // concurrent withdrawals per phase
	balance  int           // opening balance of the account
	amount   int           // each withdrawal
	delay    time.Duration // between a withdrawal's read and its write
}

// result is what one phase of load did to its account.
type result struct {
	name     string
	paid     int // 200 answers
	refused  int // 409: insufficient funds
	failed   int // anything else
	balance  int // final balance in the store
	paidOut  int // money handed out
	opening  int
	elapsed  time.Duration
	statuses map[int]int
}

// overdraft is the money paid out beyond the opening balance.
func (r result) overdraft() int { return max(0, r.paidOut-r.opening) }

// consistent reports whether the store adds up: what was paid out left the
// balance, and no more than was there.
func (r result) consistent() bool {
	return r.failed == 0 && r.overdraft() == 0 && r.balance == r.opening-r.paidOut
}

// load opens account id and sends cfg.requests concurrent withdrawals on
// it through path (a route template with %s for the account), spread over
// the replicas.
func load(ctx context.Context, name, path, id string, cfg config, s *store, reps []*replica) result {
	s.open(id, cfg.balance)
	r := result{name: name, opening: cfg.balance, statuses: map[int]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.requests}}
	defer client.CloseIdleConnections()
	for i := range cfg.requests {
		url := reps[i%len(reps)].url + fmt.Sprintf(path, id) + fmt.Sprintf("?amount=%d", cfg.amount)
		wg.Go(func() {
			<-start
			code := post(ctx, client, url)
			mu.Lock()
			defer mu.Unlock()
			r.statuses[code]++
			switch code {
			case http.StatusOK:
				r.paid++
			case http.StatusConflict:
				r.refused++
			default:
				r.failed++
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	r.elapsed = time.Since(t0)
	r.balance, _ = s.read(id)
	r.paidOut = s.paid(id)
	return r
}

func post(ctx context.Context, client *http.Client, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
