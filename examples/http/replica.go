package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
)

// replica is one instance of the bank service: its own Echo app, HTTP
// server and zklock Client (its own ZooKeeper session), sharing the store
// with the other replicas.
type replica struct {
	url    string
	client *zklock.Client
	srv    *http.Server
}

// newApp builds the service's routes. The withdraw route is locked per
// account; /unsafe/... is the same handler without the lock.
func newApp(client zklock.Locker, s *store) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)

	e.POST("/accounts/:id/withdraw", s.withdraw,
		zkmw.Lock(client, zkmw.Resource("bank/accounts/{id}"), zkmw.MaxWait(30*time.Second)))
	e.GET("/accounts/:id", s.balance,
		zkmw.Lock(client, zkmw.Resource("bank/accounts/{id}"), zkmw.WithMode(zkmw.ReadWrite)))
	e.POST("/unsafe/accounts/:id/withdraw", s.withdraw)
	return e
}

func startReplica(ctx context.Context, dsn string, s *store) (*replica, error) {
	client, err := zklock.Open(ctx, dsn, zklock.WithLabel("examples/http"))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		client.Close()
		return nil, err
	}
	r := &replica{url: "http://" + ln.Addr().String(), client: client,
		srv: &http.Server{Handler: newApp(client, s), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := r.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return r, nil
}

func (r *replica) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	r.client.Close()
}
