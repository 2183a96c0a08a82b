package zkdebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// connect opens a client on the shared server under root.
func connect(t testing.TB, root string, opts ...zklock.Option) *zklock.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, append([]zklock.Option{zklock.WithRoot(root)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scene makes c hold two resources (one with a name full of markup) and
// wait behind another client for a third. It returns the leases by
// resource.
func scene(t *testing.T, c *zklock.Client, root string, names ...string) map[string]*zklock.Lease {
	t.Helper()
	ctx := context.Background()
	held := map[string]*zklock.Lease{}
	for _, r := range names[:len(names)-1] {
		l, err := c.Acquire(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Release(ctx) })
		held[r] = l
	}
	busy := names[len(names)-1]
	other := connect(t, root, zklock.WithLabel("other"))
	l, err := other.Acquire(ctx, busy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(ctx) })
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go func() {
		if l, err := c.Acquire(wctx, busy); err == nil {
			l.Release(ctx)
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(c.Locks()) != len(names) {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter never queued: %+v", c.Locks())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return held
}

type pageJSON struct {
	Session string
	Root    string
	Time    time.Time
	Held    int
	Waiting int
	Locks   []struct {
		Resource   string
		Mode       string
		State      string
		Position   int
		Since      time.Time
		AgeSeconds float64 `json:"age_seconds"`
		Token      int64
		Session    string
		Path       string
	}
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestJSON(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := connect(t, root)
	held := scene(t, c, root, "a/held", "b/held", "c/busy")
	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()
	resp, body := get(t, srv.URL+"?format=json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var p pageJSON
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprintf("0x%x", c.SessionID())
	if p.Session != sid || p.Root != root || p.Held != 2 || p.Waiting != 1 || len(p.Locks) != 3 || time.Since(p.Time) > time.Hour {
		t.Fatalf("page %+v", p)
	}
	for i, r := range []string{"a/held", "b/held", "c/busy"} {
		l := p.Locks[i]
		if l.Resource != r || l.Mode != "exclusive" || l.Session != sid || !strings.HasPrefix(l.Path, root+"/") || l.Since.IsZero() || l.AgeSeconds < 0 {
			t.Errorf("lock %d = %+v", i, l)
		}
		if lease := held[r]; lease != nil {
			if l.State != "held" || l.Position != 0 || l.Token != lease.Token() || l.Path != lease.Path() {
				t.Errorf("held lock %d = %+v, lease token %d path %s", i, l, lease.Token(), lease.Path())
			}
		} else if l.State != "waiting" || l.Position != 1 || l.Token != 0 {
			t.Errorf("waiting lock %d = %+v", i, l)
		}
	}
}

func TestRequests(t *testing.T) {
	c := connect(t, zktest.UniqueRoot(t))
	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()
	for _, tc := range []struct {
		method, query string
		code          int
		want          string
	}{
		{"GET", "", 200, "This process holds no lock and waits for none."},
		{"GET", "?format=html", 200, "<title>zklock: locks of this process</title>"},
		{"GET", "?refresh=5", 200, `<meta http-equiv="refresh" content="5">`},
		{"GET", "?format=json", 200, `"locks": []`},
		{"HEAD", "", 200, ""},
		{"GET", "?format=xml", 400, `unknown format "xml"`},
		{"GET", "?refresh=0", 400, "refresh must be"},
		{"GET", "?refresh=abc", 400, "refresh must be"},
		{"POST", "", 405, "method not allowed"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %q: %d %q; want %d with %q", tc.method, tc.query, resp.StatusCode, b, tc.code, tc.want)
		}
		if tc.code == 200 && resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %q: Cache-Control %q", tc.method, tc.query, resp.Header.Get("Cache-Control"))
		}
		if tc.code == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("405 without Allow")
		}
	}
}

func TestNilClientPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Handler(nil) did not panic")
		}
	}()
	zkdebug.Handler(nil)
}
