package zkdebug_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// The recordings handler lists a FlightRecorder's recordings (HTML and
// JSON) and serves their files, the latest by name too; it serves no
// other file, and says when there is none yet.
func TestRecordingsHandler(t *testing.T) {
	rec, err := zklock.NewFlightRecorder(t.TempDir(), zklock.FlightWindow(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	srv := httptest.NewServer(zkdebug.Recordings(rec))
	defer srv.Close()
	if resp, body := get(t, srv.URL); resp.StatusCode != 200 || !strings.Contains(body, `id="none"`) {
		t.Fatalf("before any loss: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, srv.URL+"?latest=json"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("latest before any loss: %d; want 404", resp.StatusCode)
	}

	c := connect(t, zktest.UniqueRoot(t), zklock.WithFlightRecorder(rec))
	ctx := context.Background()
	l, err := c.Acquire(ctx, "recorded")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Conn().Delete(l.Path(), -1); err != nil { // an operator's delete: the lease is lost
		t.Fatal(err)
	}
	waitFor(t, "a recording", func() bool { rs, _ := rec.Recordings(); return len(rs) == 1 })
	rs, _ := rec.Recordings()

	var list struct {
		Dir        string
		Recordings []struct {
			Name, JSON, Trace string
			Bytes             int64
		}
	}
	_, body := get(t, srv.URL+"?format=json")
	decode(t, body, &list)
	if list.Dir != rec.Dir() || len(list.Recordings) != 1 || list.Recordings[0].Name != rs[0].Name || list.Recordings[0].Bytes == 0 {
		t.Fatalf("list: %s", body)
	}
	if resp, body := get(t, srv.URL); resp.StatusCode != 200 || !strings.Contains(body, rs[0].Name) || !strings.Contains(body, "?file="+rs[0].Name+".trace") {
		t.Fatalf("HTML list: %d %s", resp.StatusCode, body)
	}
	resp, doc := get(t, srv.URL+"/"+list.Recordings[0].JSON)
	if resp.StatusCode != 200 || !strings.Contains(doc, `"reason": "node_deleted"`) || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("JSON: %d %s", resp.StatusCode, doc)
	}
	for _, u := range []string{"?latest=trace", "/" + list.Recordings[0].Trace} {
		resp, tr := get(t, srv.URL+u)
		// A Go execution trace begins with its version header.
		if resp.StatusCode != 200 || !strings.HasPrefix(tr, "go 1.") || !strings.Contains(resp.Header.Get("Content-Disposition"), ".trace") {
			t.Fatalf("%s: %d %q %.20q", u, resp.StatusCode, resp.Header.Get("Content-Disposition"), tr)
		}
	}
	for u, code := range map[string]int{
		"?file=../../etc/passwd": http.StatusNotFound,
		"?file=" + rs[0].Name:    http.StatusNotFound,
		"?latest=zip":            http.StatusBadRequest,
		"?format=xml":            http.StatusBadRequest,
	} {
		if resp, _ := get(t, srv.URL+u); resp.StatusCode != code {
			t.Errorf("%s: %d; want %d", u, resp.StatusCode, code)
		}
	}
	resp, err = http.Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", resp.StatusCode)
	}
}
