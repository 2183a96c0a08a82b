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
	"github.com/zklockkit/zklockkit/middleware/zkecho"
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

// newEchoApp builds the service's routes on Echo. The withdraw route is
// locked per account; /unsafe/... is the same handler without the lock.
func newEchoApp(client zklock.Locker, s *store) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)

	e.POST("/accounts/:id/withdraw", s.echoWithdraw,
		zkecho.Lock(client, zkecho.Resource("bank/accounts/{id}"), zkecho.MaxWait(30*time.Second)))
	e.POST("/unsafe/accounts/:id/withdraw", s.echoWithdraw)
	return e
}

// newStdApp builds the same routes on the standard library's ServeMux.
// Its template names the same resource as the Echo app's, so both lock the
// same znode for an account.
func newStdApp(client zklock.Locker, s *store) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{id}/withdraw",
		zkmw.Lock(client, zkmw.Resource("bank/accounts/{id}"), zkmw.MaxWait(30*time.Second))(http.HandlerFunc(s.httpWithdraw)))
	mux.HandleFunc("POST /unsafe/accounts/{id}/withdraw", s.httpWithdraw)
	return mux
}

// startReplica starts a replica on Echo, or on the standard library's
// ServeMux when std is set.
func startReplica(ctx context.Context, dsn string, s *store, std bool) (*replica, error) {
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
		srv: &http.Server{Handler: newEchoApp(client, s), ReadHeaderTimeout: 10 * time.Second}}
	if std {
		r.srv.Handler = newStdApp(client, s)
	}
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
