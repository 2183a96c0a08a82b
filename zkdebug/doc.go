// Package zkdebug serves a debug page listing the locks this process holds
// and waits for, and a profile of how long its acquires wait, the way
// net/http/pprof serves profiles: mount them on an internal (not public)
// listener.
//
//	prof := zkdebug.NewContentionProfile()
//	client, err := zklock.Connect(ctx, servers, zklock.WithObserver(prof))
//	...
//	mux.Handle("/debug/zklock", zkdebug.Handler(client))
//	mux.Handle("/debug/zklock/contention", prof)
//
// # Contention profile
//
// ContentionProfile is Go's mutex profile for distributed locks: wait time
// and count per acquire call site (the caller's stack, zklock's frames cut
// off) and per resource class (label resource_class), in pprof's format:
//
//	go tool pprof -top http://host/debug/zklock/contention
//	go tool pprof 'http://host/debug/zklock/contention?seconds=30'
//
// The second form holds only the next 30 seconds. Recording one acquire
// costs a stack walk and a map update (BenchmarkContentionObserve: about
// 0.5µs, under 0.1% of an uncontended acquire and release); SetFraction
// samples, and SetFraction(0) costs nothing.
//
// # Page
//
// For people, an HTML table (every value escaped by html/template) with one
// row per lock node of the Client: resource, mode, state (held or
// waiting), position in the queue (nodes ahead; 0 when held), since when
// the node has been in the queue and for how long, fencing token (once
// held), ZooKeeper session and znode. For a held lock the time counts from
// when it joined the queue, so it includes the wait. The page makes no
// ZooKeeper call: it reads the Client's own bookkeeping (Client.Locks).
//
// Query parameters:
//
//	format=json    the same data as JSON (below)
//	refresh=N      HTML only: reload the page every N seconds (1 to 3600)
//
// # JSON
//
//	{
//	  "session": "0x100008a1b2c0003",   // the Client's current session
//	  "root": "/zklock",
//	  "time": "2025-01-02T03:04:05.123Z",
//	  "held": 2, "waiting": 1,
//	  "locks": [{
//	    "resource": "orders/42", "mode": "exclusive", "state": "held",
//	    "position": 0, "since": "2025-01-02T03:04:01.000Z", "age_seconds": 4.123,
//	    "token": 4711,                     // 0 while waiting
//	    "session": "0x100008a1b2c0003", "path": "/zklock/orders%2F42/_c_...-lock-0000000007"
//	  }]
//	}
package zkdebug
