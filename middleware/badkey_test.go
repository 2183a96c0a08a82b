package middleware_test

import (
	"net/http"
	"strings"
	"testing"

	zkmw "github.com/zklockkit/zklockkit/middleware"
	"github.com/zklockkit/zklockkit/zktest"
)

// A key that names no valid resource answers 400 with a message that says
// why: the template, the placeholder and zklock's reason, never the value
// (a header or a cookie may hold a secret), escaped and short whatever the
// key. Keys zklock takes ("..", "/", unicode) lock. (Before, the body said
// "invalid lock resource" and nothing else.)
func TestIntegration_BadKeyAnswersWhy(t *testing.T) {
	c := newClient(t, zktest.UniqueRoot(t))
	mux := http.NewServeMux()
	mux.Handle("POST /t/{id}", zkmw.Lock(c, zkmw.Resource("accounts/{id}"))(lockedAs))
	mux.Handle("GET /h", zkmw.Lock(c, zkmw.Resource("h/{header:X-Token}"))(lockedAs))
	mux.Handle("GET /c", zkmw.Lock(c, zkmw.Resource("c/{cookie:session}"))(lockedAs))
	url := serve(t, mux)

	const why = `invalid lock resource "accounts/{id}": value of {id}: `
	for _, tc := range []struct {
		name, key, want string // want: the 400 message, or "" to lock
	}{
		{"NUL", "%00", why + "contains a control character"},
		{"newline", "a%0Ab", why + "contains a control character"},
		{"DEL", "%7F", why + "contains a control character"},
		{"C1 control", "%C2%85", why + "contains a control character"},
		{"invalid UTF-8", "%FF%FE", why + "not valid UTF-8"},
		{"quote and backslash then NUL", `%22%5C%00`, why + "contains a control character"},
		{"very long", strings.Repeat("a", 2000), why + "longer than 1024 bytes"},
		{"long once filled in", strings.Repeat("a", 1020), `invalid lock resource "accounts/{id}": longer than 1024 bytes with its values filled in`},
		{"dot dot", "%2E%2E", ""},
		{"slash", "a%2Fb", ""}, // a lone %2F is a ServeMux 404
		{"unicode", "%C3%A9%E2%98%83", ""},
	} {
		a := call(t, http.MethodPost, url+"/t/"+tc.key)
		switch {
		case tc.want == "" && a.code != 200:
			t.Errorf("%s: %d %q; want 200", tc.name, a.code, a.body)
		case tc.want != "" && (a.code != 400 || a.msg != tc.want):
			t.Errorf("%s: %d %q; want 400 %q", tc.name, a.code, a.body, tc.want)
		}
	}

	secret := strings.Repeat("s3cr3t", 200) // too long for a name
	req, _ := http.NewRequest(http.MethodGet, url+"/h", nil)
	req.Header.Set("X-Token", secret)
	req.AddCookie(&http.Cookie{Name: "session", Value: secret})
	for path, want := range map[string]string{
		"/h": `invalid lock resource "h/{header:X-Token}": value of {header:X-Token}: longer than 1024 bytes`,
		"/c": `invalid lock resource "c/{cookie:session}": value of {cookie:session}: longer than 1024 bytes`,
	} {
		req.URL.Path = path
		if a := send(t, req); a.code != 400 || a.msg != want || strings.Contains(a.body, "s3cr3t") {
			t.Errorf("%s: %d %q; want 400 %q, without the secret", path, a.code, a.body, want)
		}
	}
	// Locked on a cookie, the Server-Timing header (which the page's
	// scripts can read) shows the template, not the cookie.
	req.Header.Del("Cookie")
	req.AddCookie(&http.Cookie{Name: "session", Value: "s3cr3t"})
	req.URL.Path = "/c"
	if a := send(t, req); a.code != 200 || a.body != "c/s3cr3t" || !strings.HasSuffix(a.timing, `;desc="c/{cookie:session}"`) {
		t.Errorf("locked on a cookie: %+v; want 200 with the template in Server-Timing", a)
	}
	noNodesLeft(t, c)
}
