package zkecho_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// exampleClient connects to the test ZooKeeper under a fresh root. In a
// service: zklock.Open(ctx, os.Getenv("ZKLOCK_SERVERS")).
func exampleClient(ctx context.Context, name string) *zklock.Client {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()},
		zklock.WithRoot("/zktest/"+name+"-"+hex.EncodeToString(b)))
	if err != nil {
		panic(err)
	}
	return client
}

func post(url string) string {
	resp, err := http.Post(url, "", nil)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// Lock one route: withdrawals on one account run one at a time across every
// replica; with Try, a busy account answers 423 Locked at once.
func ExampleLock() {
	ctx := context.Background()
	client := exampleClient(ctx, "ExampleLock")
	defer client.Close()

	e := echo.New()
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		return c.String(http.StatusOK, "withdrawn from "+c.Param("id"))
	}, zkmw.Lock(client, zkmw.Resource("accounts/{id}"), zkmw.Try()))
	srv := httptest.NewServer(e)
	defer srv.Close()

	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))

	// Another replica holds account 42.
	lease, _ := client.Acquire(ctx, "accounts/42")
	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))
	fmt.Println(post(srv.URL + "/accounts/7/withdraw"))
	lease.Release(ctx)
	// Output:
	// 200 withdrawn from 42
	// 423 {"message":"resource is locked"}
	// 200 withdrawn from 7
}

// Lock once for the whole app, with a table from route to rule.
func ExampleConfig_ToMiddleware() {
	ctx := context.Background()
	client := exampleClient(ctx, "ExampleConfig_ToMiddleware")
	defer client.Close()

	locks := zkmw.Config{
		Locker: client,
		Routes: map[string]zkmw.Rule{
			"POST /accounts/:id/withdraw": {Resource: "accounts/{id}", MaxWait: 2 * time.Second},
			"GET /accounts/:id":           {Resource: "accounts/{id}", ReadWrite: true},
		},
	}
	mw, err := locks.ToMiddleware()
	if err != nil {
		panic(err)
	}
	e := echo.New()
	e.Use(mw)
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error {
		// The lease: its fencing token guards the write in the store.
		lease := zkmw.LeaseFrom(c)
		return c.String(http.StatusOK, "locked "+lease.Resource()+" as "+lease.Mode().String())
	})
	e.GET("/accounts/:id", func(c echo.Context) error {
		return c.String(http.StatusOK, "locked "+zkmw.LeaseFrom(c).Resource()+" as "+zkmw.LeaseFrom(c).Mode().String())
	})
	e.GET("/health", func(c echo.Context) error {
		return c.String(http.StatusOK, fmt.Sprint("not locked: ", zkmw.LeaseFrom(c) == nil))
	})
	if err := locks.CheckRoutes(e.Routes()); err != nil {
		panic(err)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()

	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))
	for _, p := range []string{"/accounts/42", "/health"} {
		resp, _ := http.Get(srv.URL + p)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(string(body))
	}
	// Output:
	// 200 locked accounts/42 as exclusive
	// locked accounts/42 as read
	// not locked: true
}

// Check the lock middleware of each route as it is registered: a template
// that names a parameter its route lacks fails there, not at the route's
// first request.
func ExampleCheckRoute() {
	e := echo.New()
	e.OnAddRouteHandler = zkmw.CheckRoute
	defer func() { fmt.Println(recover()) }()
	e.POST("/accounts/:id/withdraw", func(c echo.Context) error { return nil },
		zkmw.Lock(zklock.NewMemoryLocker(), zkmw.Resource("accounts/{account}")))
	// Output:
	// zklock/middleware: invalid configuration: resource template "accounts/{account}": route "/accounts/:id/withdraw" has no parameter "account"
}
