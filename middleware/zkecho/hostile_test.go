package zkecho_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// rawRequest sends bytes as they are (a Go client would clean or refuse
// some of them) and reads the answer.
func rawRequest(t testing.TB, url, method, target string, header string) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: test\r\n%sContent-Length: 0\r\nConnection: close\r\n\r\n", method, target, header)
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %.80q: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Hostile keys in route parameters, query parameters and headers answer 400
// or lock a resource whose znode is a single escaped name under the root;
// afterwards no znode exists outside the test's root and no lock node is
// left anywhere.
func TestIntegration_HostileKeys(t *testing.T) {
	root := newRoot(t)
	c := newClient(t, root)
	e, url := newEcho(t)
	// The handler reports the resource it was locked under and its znode.
	report := func(c echo.Context) error {
		l := zkmw.LeaseFrom(c)
		return c.String(http.StatusOK, l.Resource()+"\x00"+l.Path())
	}
	mw := func(tmpl string) echo.MiddlewareFunc { return zkmw.Lock(c, zkmw.Resource(tmpl), zkmw.Try()) }
	e.POST("/accounts/:id/withdraw", report, zkmw.Lock(c, zkmw.Try())) // default: the route path
	e.POST("/t/:id", report, mw("accounts/{id}"))
	e.GET("/q", report, mw("q/{query:id}"))
	e.GET("/h", report, mw("h/{header:X-Account}"))

	big := strings.Repeat("a", 10*1024)
	type input struct {
		name string
		raw  string // as sent on the wire
		bad  bool   // must answer 400
	}
	inputs := []input{
		{"dotdot", "..", false},
		{"encoded dotdot", "%2e%2e", false},
		{"upper encoded dotdot", "%2E%2E", false},
		{"slash", "/", false},
		{"encoded slash", "%2F", false},
		{"traversal", "%2e%2e%2f%2e%2e%2fzookeeper", false},
		{"NUL", "%00", true},
		{"10 KB", big, true},
		{"encoded invalid UTF-8", "%ff%fe", false},
	}
	headerInputs := []input{
		{"dotdot", "..", false},
		{"encoded dotdot", "%2e%2e", false},
		{"slash", "/", false},
		{"encoded slash", "%2F", false},
		{"absolute", "/zookeeper/quota", false},
		{"traversal", "../../zookeeper", false},
		{"NUL", "a\x00b", true},
		{"10 KB", big, true},
		{"invalid UTF-8", "\xff\xfe", true},
	}

	checked := 0
	check := func(t *testing.T, code int, body string, bad bool) {
		t.Helper()
		t.Logf("answer %d %.120q", code, body)
		switch {
		case code == http.StatusBadRequest:
			return
		case bad:
			t.Fatalf("answered %d %.100q, want 400", code, body)
		case code != http.StatusOK:
			t.Fatalf("answered %d %.100q, want 400 or 200", code, body)
		}
		resource, path, _ := strings.Cut(body, "\x00")
		name, found := strings.CutPrefix(path, root+"/")
		name, _, _ = strings.Cut(name, "/") // the queue node; the lock node follows
		if !found || name != zklock.EscapeResource(resource) {
			t.Fatalf("resource %q locked at %q, want a single escaped name under %s", resource, path, root)
		}
		if r, ok := zklock.UnescapeResource(name); !ok || r != resource {
			t.Fatalf("queue name %q does not unescape to %q", name, resource)
		}
		checked++
	}
	for _, in := range inputs {
		t.Run("param "+in.name, func(t *testing.T) {
			code, body := rawRequest(t, url, http.MethodPost, "/t/"+in.raw, "")
			check(t, code, body, in.bad)
			if in.raw != "/" { // "/accounts///withdraw" is another route
				code, body = rawRequest(t, url, http.MethodPost, "/accounts/"+in.raw+"/withdraw", "")
				check(t, code, body, in.bad)
			}
		})
		t.Run("query "+in.name, func(t *testing.T) {
			code, body := rawRequest(t, url, http.MethodGet, "/q?id="+in.raw, "")
			// In a query, %00 is NUL and %ff%fe invalid UTF-8.
			check(t, code, body, in.bad || strings.HasPrefix(in.raw, "%ff"))
		})
	}
	for _, in := range headerInputs {
		t.Run("header "+in.name, func(t *testing.T) {
			code, body := rawRequest(t, url, http.MethodGet, "/h", "X-Account: "+in.raw+"\r\n")
			check(t, code, body, in.bad)
		})
	}
	if checked < 15 {
		t.Fatalf("only %d requests locked a resource: the test is not exercising escaping", checked)
	}
	assertNoZnodesOutside(t, c, root)
}

var testRootRE = regexp.MustCompile(`^/zktest/[A-Za-z0-9_-]+-[0-9a-f]{8}$`)

// assertNoZnodesOutside walks the whole ZooKeeper tree: every znode must be
// ZooKeeper's own, a test root or inside one; inside root, only queue
// nodes with valid escaped names, and no lock node of any session.
func assertNoZnodesOutside(t *testing.T, c *zklock.Client, root string) {
	t.Helper()
	conn := c.Conn()
	for _, p := range tree(t, conn, "/") {
		switch {
		case p == "/", p == "/zookeeper", strings.HasPrefix(p, "/zookeeper/"), p == "/zktest":
			continue
		case !strings.HasPrefix(p, "/zktest/"):
			t.Errorf("znode outside every test root: %q", p)
			continue
		}
		top := p
		if i := strings.IndexByte(p[len("/zktest/"):], '/'); i >= 0 {
			top = p[:len("/zktest/")+i]
		}
		if !testRootRE.MatchString(top) {
			t.Errorf("znode %q is not under a test root", p)
		}
		if top != root || p == root {
			continue
		}
		rest := strings.TrimPrefix(p, root+"/")
		if strings.Contains(rest, "/") {
			t.Errorf("lock node left behind: %q", p)
			continue
		}
		if _, ok := zklock.UnescapeResource(rest); !ok {
			t.Errorf("queue node %q is no escaped resource name", p)
		}
		_, st, err := conn.Get(p)
		if err == nil && st.EphemeralOwner != 0 {
			t.Errorf("ephemeral node %q left under the root", p)
		}
	}
}
