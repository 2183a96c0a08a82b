package zkecho_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// bank is an in-memory store shared by every replica of a test, racy on
// purpose: a withdrawal reads the balance, sleeps, then writes it back.
// Only the lock keeps two withdrawals on one account apart. Each account
// has an overlap detector.
type bank struct {
	mu       sync.Mutex
	balances map[string]int
	inside   map[string]*gauge // per account: requests inside the handler
	all      gauge             // every account
	overlaps int
}

func newBank(accounts int, balance int) *bank {
	b := &bank{balances: map[string]int{}, inside: map[string]*gauge{}}
	for i := range accounts {
		id := strconv.Itoa(i)
		b.balances[id] = balance
		b.inside[id] = &gauge{}
	}
	return b
}

func (b *bank) balance(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.balances[id]
}

// withdraw is the handler: read, pause, write. pause runs between the read
// and the write with the account's request count.
func (b *bank) withdraw(pause func(c echo.Context)) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("id")
		b.mu.Lock()
		g, ok := b.inside[id]
		b.mu.Unlock()
		if !ok {
			return echo.ErrNotFound
		}
		if g.enter() > 1 {
			b.mu.Lock()
			b.overlaps++
			b.mu.Unlock()
		}
		defer g.leave()
		b.all.enter()
		defer b.all.leave()

		bal := b.balance(id)
		if bal < 10 {
			return echo.NewHTTPError(http.StatusConflict, "insufficient funds")
		}
		pause(c)
		b.mu.Lock()
		b.balances[id] = bal - 10
		b.mu.Unlock()
		return c.String(http.StatusOK, "ok")
	}
}

// Two Echo instances, each with its own zklock Client (two replicas of a
// service), take 50 concurrent withdrawals on one account: the handlers
// never overlap and the balance is exact.
func TestIntegration_OneAccountTwoReplicasNeverOverlap(t *testing.T) {
	checkLeaks(t)
	root := newRoot(t)
	ctx := testCtx(t)
	b := newBank(1, 1000)
	pause := func(echo.Context) { time.Sleep(2 * time.Millisecond) }

	var urls []string
	var clients []*zklock.Client
	for range 2 {
		c := newClient(t, root)
		clients = append(clients, c)
		e, url := newEcho(t)
		e.POST("/accounts/:id/withdraw", b.withdraw(pause), zkmw.Lock(c, zkmw.Resource("accounts/{id}")))
		urls = append(urls, url)
	}

	const n = 50
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := doErr(ctx, http.MethodPost, urls[i%2]+"/accounts/0/withdraw", nil)
			if err != nil {
				t.Error(err)
				return
			}
			codes[i] = r.code
		})
	}
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("request %d: status %d", i, code)
		}
	}
	if b.overlaps != 0 {
		t.Errorf("%d overlapping withdrawals inside the handler", b.overlaps)
	}
	if p := b.inside["0"].peak.Load(); p != 1 {
		t.Errorf("peak requests inside the handler for one account = %d, want 1", p)
	}
	if got, want := b.balance("0"), 1000-n*10; got != want {
		t.Errorf("balance %d, want %d", got, want)
	}
	for _, c := range clients {
		assertNoLock(t, c, "accounts/0")
	}
}

// 50 requests on 50 accounts, through the app-wide route table on two
// replicas, run in parallel: the number of handlers running at once is
// measured, not assumed.
func TestIntegration_DifferentAccountsRunInParallel(t *testing.T) {
	root := newRoot(t)
	ctx := testCtx(t)
	const n = 50
	b := newBank(n, 100)

	// A handler waits (bounded) until another one runs at the same time,
	// so a single run shows whether the lock lets them overlap; if it
	// serialized them, each would wait out the shared deadline and the
	// peak would stay 1.
	deadline := time.Now().Add(10 * time.Second)
	pause := func(echo.Context) {
		for b.all.peak.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	var urls []string
	for range 2 {
		c := newClient(t, root)
		mw, err := zkmw.Config{
			Locker: c,
			Routes: map[string]zkmw.Rule{"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"}},
		}.ToMiddleware()
		if err != nil {
			t.Fatal(err)
		}
		e, url := newEcho(t)
		e.Use(mw)
		e.POST("/accounts/:id/withdraw", b.withdraw(pause))
		urls = append(urls, url)
	}

	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := doErr(ctx, http.MethodPost, fmt.Sprintf("%s/accounts/%d/withdraw", urls[i%2], i), nil)
			if err != nil {
				t.Error(err)
				return
			}
			if r.code != http.StatusOK {
				t.Errorf("account %d: status %d %s", i, r.code, r.body)
			}
			if len(r.header.Values(zkmw.HeaderServerTiming)) != 1 {
				t.Errorf("account %d: Server-Timing %q: route not locked?", i, r.header.Values(zkmw.HeaderServerTiming))
			}
		})
	}
	wg.Wait()
	if p := b.all.peak.Load(); p < 2 {
		t.Fatalf("peak handlers running at once = %d: requests on different accounts were serialized", p)
	}
	t.Logf("peak handlers running at once: %d", b.all.peak.Load())
	for i := range n {
		if got := b.balance(strconv.Itoa(i)); got != 90 {
			t.Errorf("account %d: balance %d, want 90", i, got)
		}
	}
}
