package zkdebug_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zkdebug"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// EnvScreenshot names a file the screenshot test copies its PNG to (the
// repository keeps one at docs/debug-page.png).
const EnvScreenshot = "ZKDEBUG_SCREENSHOT"

// chromium runs headless Chromium with args and returns its stdout. The
// test fails, never skips, when Chromium is missing.
func chromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatal("headless Chromium is needed to render the debug page: apt-get install -y chromium")
	}
	profile, err := os.MkdirTemp("", "zkdebug-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	// Chromium's helper processes may still be writing when it exits:
	// remove the profile best-effort.
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %q: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr class="(held|waiting)">(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<td class="([a-z ]+)"(?: title="([^"]*)")?>(.*?)</td>`)
	headRE = regexp.MustCompile(`<th>([A-Za-z]+)</th>`)
)

// TestBrowserRendersTable: Chromium loads the page and its DOM has the
// table of this process's locks, with markup in a resource name shown as
// text.
func TestBrowserRendersTable(t *testing.T) {
	root := zktest.UniqueRoot(t)
	c := connect(t, root)
	evil := `<img src=x onerror="document.title='pwned'">`
	held := scene(t, c, root, "a/orders", evil, "z/busy")
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
	if got := strings.Join(heads, " "); got != "Resource Mode State Position Since For Token Session Node" {
		t.Errorf("columns %q", got)
	}
	if !strings.Contains(dom, `<span id="counts">2 held, 1 waiting</span>`) {
		t.Errorf("counts missing:\n%s", dom)
	}
	sid := fmt.Sprintf("0x%x", c.SessionID())
	rows := rowRE.FindAllStringSubmatch(dom, -1)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), dom)
	}
	// Locks() orders by resource: "<img..." sorts before "a/orders".
	order := []string{evil, "a/orders", "z/busy"}
	locks := c.Locks()
	for i, row := range rows {
		cells := map[string]string{}
		for _, m := range cellRE.FindAllStringSubmatch(row[2], -1) {
			cells[m[1]] = html.UnescapeString(m[3])
			if m[2] != "" {
				cells[m[1]+" title"] = html.UnescapeString(m[2])
			}
		}
		want := map[string]string{"resource": order[i], "mode": "exclusive", "state": row[1],
			"num position": strconv.Itoa(locks[i].Position), "session": sid,
			"node": filepath.Base(locks[i].Path), "node title": locks[i].Path}
		if lease := held[order[i]]; lease != nil {
			want["state"], want["num token"] = "held", strconv.FormatInt(lease.Token(), 10)
		} else {
			want["state"], want["num token"], want["num position"] = "waiting", "-", "1"
		}
		for k, v := range want {
			if cells[k] != v {
				t.Errorf("row %d %s = %q, want %q (row %q)", i, k, cells[k], v, row[2])
			}
		}
		if _, err := time.Parse("15:04:05.000", cells["since"]); err != nil || cells["num age"] == "" {
			t.Errorf("row %d since %q age %q", i, cells["since"], cells["num age"])
		}
	}
}

// TestBrowserScreenshot: Chromium paints the page to a PNG.
func TestBrowserScreenshot(t *testing.T) {
	root := zklock.DefaultRoot // this test binary's server is its own
	c := connect(t, root, zklock.WithLabel("billing-worker"))
	scene(t, c, root, "billing/invoice-2291", "reports/nightly", "inventory/sku-1193")
	srv := httptest.NewServer(zkdebug.Handler(c))
	defer srv.Close()
	png := filepath.Join(t.TempDir(), "page.png")
	chromium(t, "--hide-scrollbars", "--window-size=1400,280", "--screenshot="+png, srv.URL+"/")
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 5000 {
		t.Fatalf("screenshot is not a plausible PNG (%d bytes)", len(b))
	}
	if dst := os.Getenv(EnvScreenshot); dst != "" {
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", dst)
	}
}
