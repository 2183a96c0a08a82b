package middleware_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

func post(url string) string {
	resp, err := http.Post(url, "", nil)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body)))
}

// Lock one ServeMux route: withdrawals on one account run one at a time
// across every replica; with Try, a busy account answers 423 Locked.
func ExampleLock() {
	ctx := context.Background()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zktest/ExampleLock-nethttp-"+time.Now().Format("150405.000000000")))
	if err != nil {
		panic(err)
	}
	defer client.Close()

	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{id}/withdraw", zkmw.Lock(client, zkmw.Resource("accounts/{id}"), zkmw.Try())(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "withdrawn from %s", r.PathValue("id"))
		})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))
	lease, _ := client.Acquire(ctx, "accounts/42") // another replica holds account 42
	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))
	lease.Release(ctx)
	// Output:
	// 200 withdrawn from 42
	// 423 {"message":"resource is locked"}
}

// Lock the whole app with a table from route to rule: wrapping the
// ServeMux itself, the middleware asks the mux which route will serve
// each request; routes not in the table are not locked.
func ExampleConfig_ToMiddleware() {
	ctx := context.Background()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zktest/ExampleConfig_ToMiddleware-nethttp-"+time.Now().Format("150405.000000000")))
	if err != nil {
		panic(err)
	}
	defer client.Close()

	mw, err := zkmw.Config{
		Locker: client,
		Routes: map[string]zkmw.Rule{
			"POST /accounts/{id}/withdraw": {Resource: "accounts/{id}", MaxWait: 2 * time.Second},
		},
	}.ToMiddleware()
	if err != nil {
		panic(err)
	}
	locked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lease := zkmw.LeaseFrom(r); lease != nil {
			fmt.Fprintf(w, "locked %s", lease.Resource())
			return
		}
		fmt.Fprint(w, "not locked")
	})
	mux := http.NewServeMux()
	mux.Handle("POST /accounts/{id}/withdraw", locked)
	mux.Handle("POST /health", locked)
	srv := httptest.NewServer(mw(mux))
	defer srv.Close()

	fmt.Println(post(srv.URL + "/accounts/42/withdraw"))
	fmt.Println(post(srv.URL + "/health"))
	// Output:
	// 200 locked accounts/42
	// 200 not locked
}
