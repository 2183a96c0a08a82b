package middleware

import (
	"net/http"
	"sync"
)

// muxRoutes finds the route a *http.ServeMux will serve a request with,
// for a middleware that wraps the mux itself: it runs before the mux has
// matched, so the request has no Pattern or path values yet.
type muxRoutes struct {
	mux    *http.ServeMux
	probes sync.Map // pattern → *http.ServeMux that holds that pattern alone
}

// match fills in r's Pattern and path values as the mux will, and reports
// whether the mux will serve r with one of its routes' handlers: not for
// a 404, a 405 or a redirect (to a cleaned path, or a trailing slash).
//
// The mux names the pattern it matches (ServeMux.Handler) but not the
// parameters' values; a mux that holds that pattern alone, serving r, sets
// them in r as the mux will (the pattern is the one the mux chose among
// all of its patterns, so it is the one that serves r).
func (m *muxRoutes) match(r *http.Request) bool {
	_, pattern := m.mux.Handler(r)
	if pattern == "" {
		return false // 404, 405
	}
	probe, ok := m.probes.Load(pattern)
	if !ok {
		p := http.NewServeMux()
		p.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.(*probeWriter).served = true }))
		probe, _ = m.probes.LoadOrStore(pattern, p)
	}
	var w probeWriter
	probe.(*http.ServeMux).ServeHTTP(&w, r)
	return w.served
}

// probeWriter notes whether the pattern's handler served the request (a
// redirect is written to it instead, and dropped).
type probeWriter struct {
	served bool
	header http.Header
}

func (w *probeWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

func (w *probeWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w *probeWriter) WriteHeader(int) {}
