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

// A History observes the Client and the page draws it; its JSON has one
// entry per resource class, a bucket per minute.
func ExampleNewHistory() {
	ctx := context.Background()
	hist := zkdebug.NewHistory()
	client, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()},
		zklock.WithRoot("/zkdebug-example-history"), zklock.WithObserver(hist))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for _, id := range []string{"1", "2", "3"} {
		lease, err := client.Acquire(ctx, "orders/"+id)
		if err != nil {
			log.Fatal(err)
		}
		lease.Release(ctx)
	}

	srv := httptest.NewServer(zkdebug.Handler(client, zkdebug.WithHistory(hist)))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "?format=json")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		History struct {
			BucketSeconds float64 `json:"bucket_seconds"`
			Classes       []struct {
				Class    string
				Acquired int
				Buckets  []struct{ Acquired int }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		log.Fatal(err)
	}
	for _, c := range page.History.Classes {
		inBuckets := 0
		for _, b := range c.Buckets {
			inBuckets += b.Acquired
		}
		fmt.Printf("%s: %d acquired (%d in %d buckets of %gs)\n",
			c.Class, c.Acquired, inBuckets, len(c.Buckets), page.History.BucketSeconds)
	}
	// Output:
	// orders/{id}: 3 acquired (3 in 16 buckets of 60s)
}
