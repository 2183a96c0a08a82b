// Package zkdebug serves a debug page listing the locks this process holds
// and waits for, who holds the locks it waits for, and how waits went over
// the last minutes, and a profile of how long its acquires wait, the way
// net/http/pprof serves profiles: mount them on an internal (not public)
// listener.
//
//	prof := zkdebug.NewContentionProfile()
//	hist := zkdebug.NewHistory()
//	client, err := zklock.Connect(ctx, servers, zklock.WithObserver(prof), zklock.WithObserver(hist))
//	...
//	mux.Handle("/debug/zklock", zkdebug.Handler(client, zkdebug.WithHistory(hist)))
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
// waiting), position in the queue (nodes ahead; 0 when held), for a
// waiting lock its estimated wait ("turn in", below) and the holders of
// its queue (below), since when the node has been in
// the queue and for how long, fencing token (once held), ZooKeeper session
// and znode. For a held lock the time counts from when it joined the
// queue, so it includes the wait. The table itself comes from the Client's
// own bookkeeping (Client.Locks).
//
// Under it, with WithHistory, one row per resource class with three inline
// SVG charts of the last HistoryMinutes minutes, a point per minute: the
// 50th and 99th percentiles of the waits of acquires that got their lock
// (from a histogram per minute: see History), the queue (the most acquires
// of this process waiting at once, and the most nodes ahead of a new node
// in its queue), and the leases lost, by reason. The page has no script and
// loads nothing from elsewhere.
//
// Query parameters:
//
//	format=json    the same data as JSON (below)
//	refresh=N      HTML only: reload the page every N seconds (1 to 3600);
//	               the holders read are shown again for N seconds
//
// # Holders
//
// For each waiting lock the page names the nodes holding its queue: the
// owner's label, host, process id and session (zklock.Owner, read from the
// node), and how long it has held: exactly for a lease of this Client,
// otherwise at most the time since its node joined the queue ("held ≤"),
// since ZooKeeper does not record when a node began to hold.
//
// They are read with one Client.Inspect per distinct queue, at most
// MaxLookups a page (the queues of the longest waits). A request waits at
// most the look-up budget for them (WithLookupBudget, DefaultLookupBudget),
// so the page answers within that budget plus its rendering whatever
// ZooKeeper does. What it read is shown again for DefaultLookupCache (or
// the refresh period) without asking again. When ZooKeeper does not answer
// in time the page says so, and shows the last holders read, marked stale,
// or says they are unavailable; a read that outlasts the budget goes on for
// up to 5 seconds, one per queue at a time, and serves the next request.
//
// # Turn in
//
// A waiting lock's estimated wait is its turns (zklock.QueueNode.Turns: its
// position, for an exclusive lock) times the resource's recent hold-time
// median: the median the queue's nodes report (zklock.Queue.HoldMedian),
// or, when none does or the queue was not read, the median of this
// Client's own holds of it (zklock.LocalLock.HoldMedian). Without a read
// of the queue, a lock of another mode has no estimate ("?"). The column
// also shows the deadline its acquire wrote in its node (its context's,
// or MaxWait), flagged when it falls before the estimated turn.
//
// # Flight recordings
//
// Recordings serves the recordings of a zklock.FlightRecorder (the trace
// window and the wire history written when a lease is lost): the list,
// and each file, the latest by ?latest=trace or ?latest=json.
//
// # JSON
//
//	{
//	  "session": "0x100008a1b2c0003",   // the Client's current session
//	  "root": "/zklock",
//	  "time": "2025-01-02T03:04:05.123Z",
//	  "held": 1, "waiting": 1,
//	  "locks": [{
//	    "resource": "orders/42", "mode": "exclusive", "state": "held",
//	    "position": 0, "since": "2025-01-02T03:04:01.000Z", "age_seconds": 4.123,
//	    "token": 4711,                     // 0 while waiting
//	    "session": "0x100008a1b2c0003", "path": "/zklock/orders%2F42/_c_...-lock-0000000007"
//	  }, {
//	    "resource": "orders/43", "state": "waiting", "position": 1, ...,
//	    "turns": 1, "hold_p50_seconds": 0.8,   // a waiting lock's estimate, when known
//	    "hold_source": "reports",              // or "this client"
//	    "estimated_wait_seconds": 0.8,
//	    "deadline": "2025-01-02T03:04:10.000Z", "gives_up_first": false,
//	    "waits_for": [{
//	      "label": "billing", "host": "box-1", "pid": 27461, "session": "0x100008a1b2c0004",
//	      "path": "/zklock/orders%2F43/_c_...-lock-0000000002", "token": 4702,
//	      "since": "2025-01-02T03:04:00.000Z",
//	      "held_seconds": 5.1, "held_exact": false, "this_client": false
//	    }],
//	    "holders_status": "fresh",         // or "stale", "unavailable"
//	    "holders_read": "2025-01-02T03:04:05.101Z",
//	    "holders_error": ""                // why not fresh
//	  }],
//	  "history": {                         // with WithHistory
//	    "bucket_seconds": 60, "from": "2025-01-02T02:49:00Z",
//	    "classes": [{
//	      "class": "orders/{id}", "acquired": 812, "gave_up": 3, "lost": 0,
//	      "waited_seconds": 41.7, "wait_p50_seconds": 0.0021, "wait_p99_seconds": 0.84,
//	      "buckets": [{                    // HistoryMinutes+1, oldest first
//	        "start": "2025-01-02T02:49:00Z", "acquired": 50, "gave_up": 0,
//	        "wait_p50_seconds": 0.0019, "wait_p99_seconds": 0.52,   // null without acquires
//	        "max_waiting": 3, "max_ahead": 4, "lost": {"node_deleted": 1}
//	      }, ...]
//	    }]
//	  }
//	}
package zkdebug
