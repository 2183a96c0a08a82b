package zkdebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// Mount the page next to net/http/pprof on an internal listener; here a
// test server stands in for it.
func ExampleHandler() {
	ctx := context.Background()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot("/zkdebug-example"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	lease, err := client.Acquire(ctx, "orders/42")
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(ctx)

	mux := http.NewServeMux()
	mux.Handle("/debug/zklock", zkdebug.Handler(client))
	srv := httptest.NewServer(mux) // in a service: go http.ListenAndServe("127.0.0.1:6060", mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/zklock?format=json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Held, Waiting int
		Locks         []struct{ Resource, Mode, State string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	fmt.Println(page.Held, "held,", page.Waiting, "waiting")
	for _, l := range page.Locks {
		fmt.Println(l.Resource, l.Mode, l.State)
	}
	// Output:
	// 1 held, 0 waiting
	// orders/42 exclusive held
}
