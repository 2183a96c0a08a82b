package zkdebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
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

// scene makes c hold every resource of names but the last, and wait for
// the last behind another client, labelled label. It returns the leases
// by resource, and the other client.
func scene(t *testing.T, c *zklock.Client, root, label string, names ...string) (map[string]*zklock.Lease, *zklock.Client) {
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
	other := connect(t, root, zklock.WithLabel(label))
	l, err := other.Acquire(ctx, busy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Release(ctx) })
	wait(t, c, busy)
	return held, other
}

// wait makes c wait for resource in the background until the test ends,
// and returns once its node is in the queue.
func wait(t *testing.T, c *zklock.Client, resource string, opts ...zklock.AcquireOption) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	n := len(c.Locks())
	go func() {
		if l, err := c.Acquire(ctx, resource, opts...); err == nil {
			l.Release(context.Background())
		}
	}()
	waitFor(t, "the waiter to queue", func() bool { return len(c.Locks()) > n })
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type pageJSON struct {
	Session string
	Root    string
	Time    time.Time
	Held    int
	Waiting int
	Locks   []struct {
		Resource      string
		Mode          string
		State         string
		Position      int
		Since         time.Time
		AgeSeconds    float64 `json:"age_seconds"`
		Token         int64
		Session       string
		Path          string
		WaitsFor      []holderJSON `json:"waits_for"`
		HoldersStatus string       `json:"holders_status"`
		HoldersRead   *time.Time   `json:"holders_read"`
		HoldersError  string       `json:"holders_error"`
	}
	History *struct {
		BucketSeconds float64 `json:"bucket_seconds"`
		Classes       []struct {
			Class          string
			Acquired       int
			GaveUp         int `json:"gave_up"`
			Lost           int
			WaitP99Seconds *float64 `json:"wait_p99_seconds"`
			Buckets        []struct {
				Acquired       int
				WaitP99Seconds *float64 `json:"wait_p99_seconds"`
				MaxWaiting     int      `json:"max_waiting"`
				MaxAhead       int      `json:"max_ahead"`
				Lost           map[string]int
			}
		}
	}
}

type holderJSON struct {
	Label       string
	Host        string
	PID         int
	Session     string
	Path        string
	Token       int64
	Since       time.Time
	HeldSeconds float64 `json:"held_seconds"`
	HeldExact   bool    `json:"held_exact"`
	ThisClient  bool    `json:"this_client"`
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
	held, other := scene(t, c, root, "billing", "a/held", "b/held", "c/busy")
	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()
	p := getJSON(t, srv.URL)
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
		if held[r] != nil {
			if l.WaitsFor != nil || l.HoldersStatus != "" {
				t.Errorf("held lock %d shows holders: %+v", i, l)
			}
			continue
		}
		// The waiting lock shows who holds its queue, read from ZooKeeper.
		q, err := other.Inspect(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		h, host := q.Holders()[0], hostname(t)
		if l.HoldersStatus != "fresh" || l.HoldersRead == nil || time.Since(*l.HoldersRead) > time.Minute || len(l.WaitsFor) != 1 {
			t.Fatalf("waiting lock %d: %+v", i, l)
		}
		w := l.WaitsFor[0]
		if w.Label != "billing" || w.Host != host || w.PID != os.Getpid() || w.Session != fmt.Sprintf("0x%x", other.SessionID()) ||
			w.Path != h.Path || w.Token != h.Token || w.ThisClient || w.HeldExact || w.HeldSeconds <= 0 || w.HeldSeconds > 60 {
			t.Errorf("waiting lock %d waits for %+v; want %+v", i, w, h)
		}
	}
}

// getJSON gets the page's JSON.
func getJSON(t *testing.T, url string) pageJSON {
	t.Helper()
	resp, body := get(t, url+"?format=json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var p pageJSON
	decode(t, body, &p)
	return p
}

func decode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%v:\n%s", err, body)
	}
}

// session formats a session id as the page does.
func session(id int64) string { return fmt.Sprintf("0x%x", id) }

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
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
