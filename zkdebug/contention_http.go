package zkdebug

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ServeHTTP serves the profile in pprof's format, for go tool pprof: with
// ?seconds=N (1 to 3600), only what is recorded during the next N seconds,
// as net/http/pprof serves delta profiles; otherwise everything since the
// profile was made. It answers GET and HEAD only.
func (p *ContentionProfile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "zkdebug: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	samples, start, end := p.snapshot(), p.start, time.Now()
	if s := r.URL.Query().Get("seconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 3600 {
			http.Error(w, "zkdebug: seconds must be a number from 1 to 3600", http.StatusBadRequest)
			return
		}
		before := samples
		t := time.NewTimer(time.Duration(n) * time.Second)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return // the client went away
		}
		start, end = end, time.Now()
		samples = delta(before, p.snapshot())
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="zklock-contention.pb.gz"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := p.build(samples, start, end).Write(w); err != nil {
		http.Error(w, fmt.Sprintf("zkdebug: writing the profile: %v", err), http.StatusInternalServerError)
	}
}
