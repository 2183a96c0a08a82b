package zkdebug_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/headless"
	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// EnvScreenshot names a file the screenshot test copies its PNG to (the
// repository keeps one at docs/debug-page.png).
const EnvScreenshot = "ZKDEBUG_SCREENSHOT"

// chromium runs headless Chromium with args and returns its stdout. The
// test fails, never skips, when Chromium is missing. Chromium resolves no
// host but loopback, as on an air-gapped machine.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := headless.Chromium(context.Background(), args...)
	if err != nil {
		t.Fatal(err) // names the install command when Chromium is missing
	}
	return out
}

var (
	rowRE    = regexp.MustCompile(`(?s)<tr class="(held|waiting)">(.*?)</tr>`)
	cellRE   = regexp.MustCompile(`(?s)<td class="([a-z ]+)"(?: title="([^"]*)")?>(.*?)</td>`)
	headRE   = regexp.MustCompile(`<th>([A-Za-z0-9 ]+)</th>`)
	holderRE = regexp.MustCompile(`<div class="holder( mine)?" title="node ([^"]*) · token (\d+)"><span class="label">(.*?)</span> · <span class="host">(.*?)</span> · pid <span class="pid">(\d+)</span> · <span class="hsession">(0x[0-9a-f]+)</span> · <span class="held">held (≤ )?([^<]+)</span></div>`)
)

// holderCell is one holder shown in a waiting row's "Waits for" cell.
type holderCell struct {
	mine                             bool
	path, label, host, session, held string
	token, pid                       int64
	bounded                          bool
}

func holdersIn(cell string) []holderCell {
	var hs []holderCell
	for _, m := range holderRE.FindAllStringSubmatch(cell, -1) {
		token, _ := strconv.ParseInt(m[3], 10, 64)
		pid, _ := strconv.ParseInt(m[6], 10, 64)
		hs = append(hs, holderCell{mine: m[1] != "", path: html.UnescapeString(m[2]), token: token,
			label: html.UnescapeString(m[4]), host: html.UnescapeString(m[5]), pid: pid, session: m[7],
			bounded: m[8] != "", held: m[9]})
	}
	return hs
}

// cells splits a table row into its cells by class (and the title of
// those that have one, as "class title").
func cells(row string) map[string]string {
	out := map[string]string{}
	for _, m := range cellRE.FindAllStringSubmatch(row, -1) {
		out[m[1]] = m[3]
		if m[2] != "" {
			out[m[1]+" title"] = html.UnescapeString(m[2])
		}
	}
	return out
}

// TestBrowserRendersTable: Chromium loads the page and its DOM has the
// table of this process's locks, with markup in a resource name and in
// the label of the holder it waits for shown as text.
func TestBrowserRendersTable(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := connect(t, root)
	evil := `<img src=x onerror="document.title='pwned'">`
	held, other := scene(t, c, root, evil, "a/orders", evil, "z/busy")
	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()

	dom := string(chromium(t, "--dump-dom", srv.URL+"/"))
	if !strings.Contains(dom, "<title>zklock: locks of this process</title>") {
		t.Fatalf("page title missing or changed (script ran?):\n%s", dom)
	}
	// the DOM serializer escapes only <, > and & in text
	if strings.Contains(dom, "<img") || !strings.Contains(dom, strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(evil)) {
		t.Errorf("the resource name was not escaped:\n%s", dom)
	}
	var heads []string
	for _, m := range headRE.FindAllStringSubmatch(dom, -1) {
		heads = append(heads, m[1])
	}
	if got := strings.Join(heads, ","); got != "Resource,Mode,State,Position,Turn in,Waits for,Since,For,Token,Session,Node" {
		t.Errorf("columns %q", got)
	}
	if !strings.Contains(dom, `<span id="counts">2 held, 1 waiting</span>`) {
		t.Errorf("counts missing:\n%s", dom)
	}
	if !strings.Contains(dom, `<p id="holders-status" class="ok">`) {
		t.Errorf("holder status missing or not ok:\n%s", dom)
	}
	sid := fmt.Sprintf("0x%x", c.SessionID())
	rows := rowRE.FindAllStringSubmatch(dom, -1)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), dom)
	}
	// Locks() orders by resource: "<img..." sorts before "a/orders".
	order := []string{evil, "a/orders", "z/busy"}
	locks := c.Locks()
	host, _ := os.Hostname()
	for i, row := range rows {
		cs := cells(row[2])
		got := map[string]string{}
		for k, v := range cs {
			got[k] = html.UnescapeString(v)
		}
		want := map[string]string{"resource": order[i], "mode": "exclusive", "state": row[1],
			"num position": strconv.Itoa(locks[i].Position), "session": sid,
			"node": filepath.Base(locks[i].Path), "node title": locks[i].Path}
		if lease := held[order[i]]; lease != nil {
			want["state"], want["num token"], want["waits"], want["turn"] = "held", strconv.FormatInt(lease.Token(), 10), "-", "-"
		} else {
			// No client has released the resource yet: no hold-time
			// median is known, so the wait is not estimated.
			want["state"], want["num token"], want["num position"], want["turn"] = "waiting", "-", "1", "?"
			hs := holdersIn(cs["waits"])
			if len(hs) != 1 {
				t.Fatalf("row %d: %d holders in %q, want the other client's", i, len(hs), cs["waits"])
			}
			h := hs[0]
			q, err := other.Inspect(context.Background(), "z/busy")
			if err != nil {
				t.Fatal(err)
			}
			if h.label != evil || h.host != host || h.pid != int64(os.Getpid()) || h.session != fmt.Sprintf("0x%x", other.SessionID()) ||
				h.mine || !h.bounded || h.path != q.Holders()[0].Path || h.token != q.Holders()[0].Token {
				t.Errorf("row %d: holder %+v; want the other client's node %+v", i, h, q.Holders()[0])
			}
			if d, err := time.ParseDuration(h.held); err != nil || d > time.Minute {
				t.Errorf("row %d: held %q", i, h.held)
			}
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("row %d %s = %q, want %q (row %q)", i, k, got[k], v, row[2])
			}
		}
		if _, err := time.Parse("15:04:05.000", got["since"]); err != nil || got["num age"] == "" {
			t.Errorf("row %d since %q age %q", i, got["since"], got["num age"])
		}
	}
}

// contend runs a few seconds of real contention through c (observed by a
// History) against the other clients' holds, on the test binary's own
// server, so that every chart of the page has something to show:
//   - c's workers lock accounts/N, which batch holds for long stretches in
//     the middle of the run (the waits' p99 rises, waiters pile up);
//   - c tries reports/daily, which ops holds (busy answers);
//   - c takes inventory/sku/N uncontended, and loses one of them to an
//     operator's delete of its node (a lease lost, node_deleted).
func contend(t *testing.T, c, batch, ops *zklock.Client, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	daily, err := ops.Acquire(ctx, "reports/daily")
	if err != nil {
		t.Fatal(err)
	}
	defer daily.Release(context.Background())
	errs := make(chan error, 16)
	var workers []chan struct{}
	worker := func(f func(i int) error) {
		done := make(chan struct{})
		workers = append(workers, done)
		go func() {
			defer close(done)
			for i := 0; ctx.Err() == nil; i++ {
				if err := f(i); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
			}
		}()
	}
	hold := func(cl *zklock.Client, r string, d time.Duration, opts ...zklock.AcquireOption) error {
		l, err := cl.Acquire(ctx, r, opts...)
		if err != nil {
			if errors.Is(err, zklock.ErrWaitTimeout) || errors.Is(err, zklock.ErrLocked) || errors.Is(err, zklock.ErrUnavailable) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		return l.Release(context.Background())
	}
	start := time.Now()
	for w := range 4 {
		worker(func(i int) error {
			return hold(c, fmt.Sprintf("accounts/%d", 40+(w+i)%3), time.Duration(5+i%4*5)*time.Millisecond,
				zklock.MaxWait(1500*time.Millisecond))
		})
	}
	worker(func(i int) error { // the batch job: long holds in the middle third of the run
		if s := time.Since(start); s < d/3 || s > 2*d/3 {
			time.Sleep(50 * time.Millisecond)
			return nil
		}
		return hold(batch, fmt.Sprintf("accounts/%d", 40+i%3), time.Duration(200+i%4*150)*time.Millisecond)
	})
	worker(func(i int) error {
		time.Sleep(150 * time.Millisecond)
		_, err := c.TryAcquire(ctx, "reports/daily")
		if err == nil {
			return errors.New("reports/daily was free")
		}
		if errors.Is(err, zklock.ErrLocked) || errors.Is(err, zklock.ErrUnavailable) {
			return nil // a try's answers; unavailable: ZooKeeper slower than the try's bound on a loaded machine
		}
		return err
	})
	worker(func(i int) error {
		r := fmt.Sprintf("inventory/sku/%d", 1190+i%7)
		if i%40 != 25 {
			return hold(c, r, 20*time.Millisecond)
		}
		l, err := c.Acquire(ctx, r)
		if err != nil {
			return err
		}
		if err := batch.Conn().Delete(l.Path(), -1); err != nil { // an operator's delete
			return err
		}
		<-l.Done()
		return nil
	})
	for _, w := range workers {
		<-w
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestBrowserContention: under real contention, the page says who each
// waiting lock waits for (label, host, pid, session of the holder) and
// draws the history as inline SVG charts, with no script and nothing
// fetched from elsewhere; Chromium paints it to a PNG (with
// ZKDEBUG_SCREENSHOT=docs/debug-page.png, the repository's picture). The
// history's buckets are two seconds wide here, so that the test's seconds of
// contention fill the window that minutes fill in a service.
func TestBrowserContention(t *testing.T) {
	root := zklock.DefaultRoot // this test binary's server is its own
	hist := zkdebug.NewHistory()
	zkdebug.SetHistoryBucket(hist, 2*time.Second)
	c := connect(t, root, zklock.WithLabel("billing-worker"), zklock.WithObserver(hist))
	batch := connect(t, root, zklock.WithLabel("billing-batch"))
	ops := connect(t, root, zklock.WithLabel("ops-nightly"))
	contend(t, c, batch, ops, 20*time.Second)

	// Then the state the table shows: two leases held, three waits.
	ctx := context.Background()
	for _, r := range []string{"billing/invoice-2291", "reports/weekly"} {
		l, err := c.Acquire(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Release(ctx) })
	}
	for _, h := range []struct {
		cl *zklock.Client
		r  string
	}{{batch, "accounts/40"}, {ops, "reports/daily"}} {
		l, err := h.cl.Acquire(ctx, h.r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Release(ctx) })
	}
	wait(t, c, "accounts/40")
	wait(t, c, "reports/daily")
	wait(t, c, "billing/invoice-2291") // behind a lease of its own client
	time.Sleep(300 * time.Millisecond)

	srv := httptest.NewServer(zkdebug.Handler(c, zkdebug.WithHistory(hist)))
	defer srv.Close()
	_, raw := get(t, srv.URL)
	// Chromium gets the page as it was at the end of the contention: on a
	// loaded machine it can take longer to start than the window lasts.
	frozen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, raw)
	}))
	defer frozen.Close()
	for _, bad := range []string{"<script", "<link", " src=", "url(", "https://", "@import"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the page has %q: it must need nothing but itself", bad)
		}
	}
	if n := strings.Count(raw, "http://"); n != strings.Count(raw, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("the page names an http:// address other than the SVG namespace")
	}

	png := filepath.Join(t.TempDir(), "page.png")
	chromium(t, "--hide-scrollbars", "--window-size=1700,1060", "--screenshot="+png, frozen.URL+"/")
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 20000 {
		t.Fatalf("screenshot is not a plausible PNG (%d bytes)", len(b))
	}
	if dst := os.Getenv(EnvScreenshot); dst != "" {
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", dst)
	}

	dom := string(chromium(t, "--dump-dom", frozen.URL+"/"))
	host := hostname(t)
	want := map[string]struct {
		label   string
		session int64
		mine    bool
	}{
		"accounts/40":          {"billing-batch", batch.SessionID(), false},
		"reports/daily":        {"ops-nightly", ops.SessionID(), false},
		"billing/invoice-2291": {"billing-worker", c.SessionID(), true},
	}
	seen := 0
	for _, row := range rowRE.FindAllStringSubmatch(dom, -1) {
		cs := cells(row[2])
		w, ok := want[html.UnescapeString(cs["resource"])]
		if row[1] != "waiting" || !ok {
			continue
		}
		seen++
		hs := holdersIn(cs["waits"])
		if len(hs) != 1 {
			t.Errorf("%s: holders %q", cs["resource"], cs["waits"])
			continue
		}
		h := hs[0]
		if h.label != w.label || h.host != host || h.pid != int64(os.Getpid()) || h.session != fmt.Sprintf("0x%x", w.session) ||
			h.mine != w.mine || h.bounded == w.mine || h.token == 0 {
			t.Errorf("%s waits for %+v; want %s on %s, pid %d, session 0x%x", cs["resource"], h, w.label, host, os.Getpid(), w.session)
		}
	}
	if seen != len(want) {
		t.Errorf("%d waiting rows with a holder, want %d:\n%s", seen, len(want), dom)
	}

	// The history: a row per class, each with its three charts.
	classes := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<tr class="class">(.*?)</tr>`).FindAllStringSubmatch(dom, -1) {
		name := regexp.MustCompile(`<td class="class" title="[^"]*">(.*?)</td>`).FindStringSubmatch(m[1])
		if name == nil {
			t.Fatalf("history row without a class: %q", m[1])
		}
		classes[html.UnescapeString(name[1])] = m[1]
	}
	for _, class := range []string{"accounts/{id}", "reports/daily", "inventory/sku/{id}"} {
		row, ok := classes[class]
		if !ok {
			t.Errorf("no history row for %s (rows: %v)", class, classes)
			continue
		}
		for _, kind := range []string{"wait", "queue", "lost"} {
			if !strings.Contains(row, `<svg class="chart `+kind+`"`) {
				t.Errorf("%s: no %s chart", class, kind)
			}
		}
	}
	acc := classes["accounts/{id}"]
	if strings.Count(acc, `<circle class="p99"`) < 3 || !strings.Contains(acc, `<path class="p99" d="M`) ||
		!strings.Contains(acc, `<rect class="waiting"`) {
		t.Errorf("accounts/{id}: the wait and queue charts draw too little:\n%s", acc)
	}
	if !strings.Contains(classes["inventory/sku/{id}"], `<rect class="loss-node_deleted"`) {
		t.Errorf("inventory/sku/{id}: the lost lease is not drawn:\n%s", classes["inventory/sku/{id}"])
	}
	if !regexp.MustCompile(`<td class="num gaveup">[1-9]\d*</td>`).MatchString(classes["reports/daily"]) {
		t.Errorf("reports/daily: no busy try counted:\n%s", classes["reports/daily"])
	}

}
