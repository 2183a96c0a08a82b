package zkdebug

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// HandlerOption configures Handler.
type HandlerOption func(*handler)

// WithHistory shows h's charts on the page (and its buckets in the JSON):
// wait time, queue length and lost leases per resource class over the
// last HistoryMinutes minutes. h must observe the Client
// (zklock.WithObserver) to have anything to show.
func WithHistory(h *History) HandlerOption {
	return func(hd *handler) { hd.history = h }
}

// WithLookupBudget sets how long one request for the page waits for
// ZooKeeper to say who holds the queues this process waits in (default
// DefaultLookupBudget). Past it the page answers with what it read before,
// marked stale, or says the holders are unavailable. 0 turns the look-up
// off: the page then makes no ZooKeeper call.
func WithLookupBudget(d time.Duration) HandlerOption {
	return func(hd *handler) { hd.lookup.budget = max(d, 0) }
}

// Handler returns an http.Handler that shows client's held and waiting
// locks, who holds the locks it waits for and, WithHistory, how waits went
// over the last minutes: HTML by default, JSON with ?format=json (see the
// package documentation). It answers GET and HEAD only. It panics if
// client is nil.
func Handler(client *zklock.Client, opts ...HandlerOption) http.Handler {
	if client == nil {
		panic("zkdebug: Handler called with a nil *zklock.Client")
	}
	h := &handler{client: client, lookup: &lookup{client: client, budget: DefaultLookupBudget, queues: map[string]*queueRead{}}}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	return h
}

type handler struct {
	client  *zklock.Client
	lookup  *lookup
	history *History
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "zkdebug: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	refresh := 0
	if s := q.Get("refresh"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 3600 {
			http.Error(w, "zkdebug: refresh must be a number of seconds from 1 to 3600", http.StatusBadRequest)
			return
		}
		refresh = n
	}
	format := q.Get("format")
	if format != "" && format != "html" && format != "json" {
		http.Error(w, "zkdebug: unknown format "+strconv.Quote(format)+" (want html or json)", http.StatusBadRequest)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	ttl := DefaultLookupCache
	if refresh > 0 {
		ttl = time.Duration(refresh) * time.Second
	}
	now := time.Now()
	s := take(h.client, h.lookup, ttl, now)
	if h.history != nil {
		s.History = h.history.view(now)
	}
	if format == "json" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, htmlPage{snapshot: s, Refresh: refresh})
}
