package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// store is the balance store every replica shares: deliberately racy. A
// withdrawal reads the balance, takes a while (delay), then writes the new
// balance back, so two withdrawals that overlap both see the old balance
// and money is paid out twice. Each single read or write is atomic (no data
// race in the Go sense); only the lock keeps read-modify-write sequences
// apart.
type store struct {
	delay time.Duration

	mu       sync.Mutex
	balances map[string]int
	paidOut  map[string]int
}

func newStore(delay time.Duration) *store {
	return &store{delay: delay, balances: map[string]int{}, paidOut: map[string]int{}}
}

func (s *store) open(id string, balance int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balances[id], s.paidOut[id] = balance, 0
}

func (s *store) read(id string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.balances[id]
	return b, ok
}

func (s *store) write(id string, balance, paid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balances[id] = balance
	s.paidOut[id] += paid
}

func (s *store) paid(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paidOut[id]
}

// withdraw does a withdrawal of amount (the query parameter's text) from
// account id: the answer's status and message. It returns ctx's error,
// and no answer, when ctx ends first (client gone, or lock lost).
func (s *store) withdraw(ctx context.Context, id, amount string) (int, string, error) {
	n, err := strconv.Atoi(amount)
	if err != nil || n <= 0 {
		return http.StatusBadRequest, "amount must be a positive integer", nil
	}
	balance, ok := s.read(id)
	if !ok {
		return http.StatusNotFound, "no such account", nil
	}
	if balance < n {
		return http.StatusConflict, "insufficient funds", nil
	}
	select { // the slow part: a fraud check, a call to the ledger...
	case <-time.After(s.delay):
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
	s.write(id, balance-n, n)
	return http.StatusOK, "balance " + strconv.Itoa(balance-n), nil
}

// echoWithdraw is withdraw as an Echo handler:
// POST .../accounts/:id/withdraw?amount=N.
func (s *store) echoWithdraw(c echo.Context) error {
	code, msg, err := s.withdraw(c.Request().Context(), c.Param("id"), c.QueryParam("amount"))
	if err != nil {
		return err
	}
	return c.JSON(code, map[string]string{"message": msg})
}

// httpWithdraw is withdraw as a net/http handler, for a ServeMux pattern
// with {id}.
func (s *store) httpWithdraw(w http.ResponseWriter, r *http.Request) {
	code, msg, err := s.withdraw(r.Context(), r.PathValue("id"), r.URL.Query().Get("amount"))
	if err != nil {
		return // the middleware answers a lost lock
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
