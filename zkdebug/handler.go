package zkdebug

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/zklockkit/zklockkit/zklock"
)

// Handler returns an http.Handler that shows client's held and waiting
// locks: HTML by default, JSON with ?format=json (see the package
// documentation). It answers GET and HEAD only. It panics if client is nil.
func Handler(client *zklock.Client) http.Handler {
	if client == nil {
		panic("zkdebug: Handler called with a nil *zklock.Client")
	}
	return &handler{client: client}
}

type handler struct {
	client *zklock.Client
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
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	s := take(h.client, time.Now())
	switch format := q.Get("format"); format {
	case "json":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
	case "", "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, htmlPage{snapshot: s, Refresh: refresh})
	default:
		http.Error(w, "zkdebug: unknown format "+strconv.Quote(format)+" (want html or json)", http.StatusBadRequest)
	}
}
