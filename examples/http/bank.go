package main

import (
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

// withdraw handles POST .../accounts/:id/withdraw?amount=N: 200 when paid,
// 409 when the balance is too low.
func (s *store) withdraw(c echo.Context) error {
	id := c.Param("id")
	amount, err := strconv.Atoi(c.QueryParam("amount"))
	if err != nil || amount <= 0 {
		return echo.NewHTTPError(http.StatusBadRequest, "amount must be a positive integer")
	}
	balance, ok := s.read(id)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "no such account")
	}
	if balance < amount {
		return echo.NewHTTPError(http.StatusConflict, "insufficient funds")
	}
	select { // the slow part: a fraud check, a call to the ledger...
	case <-time.After(s.delay):
	case <-c.Request().Context().Done(): // client gone, or lock lost
		return c.Request().Context().Err()
	}
	s.write(id, balance-amount, amount)
	return c.JSON(http.StatusOK, map[string]int{"balance": balance - amount})
}

// balance handles GET /accounts/:id.
func (s *store) balance(c echo.Context) error {
	b, ok := s.read(c.Param("id"))
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "no such account")
	}
	return c.JSON(http.StatusOK, map[string]int{"balance": b})
}
