package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// replica is one instance of the bank service: its own Echo app, HTTP
// server and zklock Client (its own ZooKeeper session).
type replica struct {
	url    string
	client *zklock.Client
	srv    *http.Server
}

// newApp builds the routes. Both withdraw routes run under the lock on
// "accounts/{id}"; only the first writes through the fence.
func newApp(client zklock.Locker, b *bank) *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	lock := zkmw.Lock(client, zkmw.Resource("accounts/{id}"), zkmw.MaxWait(time.Minute))
	e.POST("/accounts/:id/withdraw", b.withdraw(true), lock)
	e.POST("/nofence/accounts/:id/withdraw", b.withdraw(false), lock)
	return e
}

func startReplica(ctx context.Context, zkDSN string, sessionTimeout time.Duration, b *bank) (*replica, error) {
	client, err := zklock.Open(ctx, zkDSN, zklock.WithLabel("examples/fence replica "+b.replica),
		zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		client.Close()
		return nil, err
	}
	r := &replica{url: "http://" + ln.Addr().String(), client: client,
		srv: &http.Server{Handler: newApp(client, b), ReadHeaderTimeout: 10 * time.Second}}
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

// runChild is a replica in a process of its own, the one the demo pauses.
// It says "LISTENING <url>", and at each withdrawal's pause point
// "AUTHORIZING <account>", after which it waits for a line on stdin.
func runChild(zkDSN, driver, dsn, name string, sessionTimeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	f, err := setUp(ctx, db)
	if err != nil {
		return err
	}
	in := bufio.NewReader(os.Stdin)
	b := &bank{db: db, dialect: f.Dialect(), fence: f, replica: name, pause: func(account string) {
		fmt.Println("AUTHORIZING", account)
		_, _ = in.ReadString('\n')
	}}
	r, err := startReplica(ctx, zkDSN, sessionTimeout, b)
	if err != nil {
		return err
	}
	defer r.close()
	fmt.Println("LISTENING", r.url)
	<-ctx.Done()
	return nil
}
