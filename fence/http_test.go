package fence_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/fence"
	"github.com/zklockkit/zklockkit/zklock"
)

// A token travels as "<value> <escaped resource>" and comes back equal,
// whatever the resource holds; anything else is ErrInvalidToken.
func TestTokenString(t *testing.T) {
	for _, r := range []string{"accounts/42", "a b", "é/ü", "100%", ".", "..", "/locks/raw", "x,y"} {
		tok := fence.NewToken(r, 4294967302)
		s := tok.String()
		if strings.ContainsAny(s[strings.IndexByte(s, ' ')+1:], " /") {
			t.Fatalf("%q: %q", r, s)
		}
		back, err := fence.ParseToken(s)
		if err != nil || back != tok {
			t.Fatalf("%q -> %q -> %v, %v", r, s, back, err)
		}
	}
	if s := fence.NewToken("accounts/42", 7).String(); s != "7 accounts%2F42" {
		t.Fatalf("String = %q", s)
	}
	for _, s := range []string{"", "7", "7 ", " a", "0 a", "-7 a", "+7 a", "7  a", "7 a b", "7 a/b", "7 %zz",
		"99999999999999999999 a", "7 %00", "x a", "7\ta"} {
		if tok, err := fence.ParseToken(s); !errors.Is(err, fence.ErrInvalidToken) {
			t.Fatalf("%q: %v, %v; want ErrInvalidToken", s, tok, err)
		}
	}
}

func FuzzParseToken(f *testing.F) {
	f.Add("7 accounts%2F42")
	f.Add("1 %2E")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := fence.ParseToken(s)
		if err != nil {
			if !errors.Is(err, fence.ErrInvalidToken) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		back, err := fence.ParseToken(tok.String())
		if err != nil || back != tok {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, tok, tok.String(), back, err)
		}
	})
}

// Across processes over HTTP: a client holding a real lease calls a real
// HTTP server through fence.Transport; the server guards its transaction
// with the carried token (GuardRequest). The newer lease's call writes;
// a call carrying the older token is refused; a call without a token, or
// with two, gets a typed error. The transport leaves the caller's request
// as it was and never overrides a header set by hand.
func TestIntegration_HTTPCarriesToken(t *testing.T) {
	e := postgresEngine(t)
	ctx := testCtx(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tx, err := e.db.BeginTx(r.Context(), nil)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer tx.Rollback()
		err = e.fence.GuardRequest(r.Context(), tx, r)
		switch {
		case errors.Is(err, fence.ErrStaleToken):
			http.Error(w, err.Error(), http.StatusConflict)
		case errors.Is(err, fence.ErrNoToken), errors.Is(err, fence.ErrInvalidToken):
			http.Error(w, err.Error(), http.StatusBadRequest)
		case err != nil:
			http.Error(w, err.Error(), 500)
		default:
			must(t, tx.Commit())
			tok, _ := fence.FromRequest(r)
			w.Write([]byte(strconv.FormatInt(tok.Token(), 10) + " " + tok.Resource()))
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: fence.Transport(nil)}
	call := func(req *http.Request) (int, string) {
		t.Helper()
		resp, err := client.Do(req)
		must(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, strings.TrimSpace(b.String())
	}

	c := newClient(t)
	older, _ := leasePair(t, c, "accounts/9 é")
	l, err := c.Acquire(ctx, "accounts/9 é")
	must(t, err)
	defer l.Release(ctx)
	req, _ := http.NewRequestWithContext(l.Context(ctx), "POST", srv.URL, nil)
	if code, body := call(req); code != 200 || body != strconv.FormatInt(l.Token(), 10)+" accounts/9 é" {
		t.Fatalf("holder's call: %d %q", code, body)
	}
	if req.Header.Get(fence.Header) != "" {
		t.Fatal("the transport modified the caller's request")
	}
	if got := e.stored(t, "accounts/9 é"); got != l.Token() {
		t.Fatalf("stored %d, want %d", got, l.Token())
	}

	req, _ = http.NewRequestWithContext(l.Context(ctx), "POST", srv.URL, nil)
	req.Header.Set(fence.Header, fence.NewToken("accounts/9 é", older.Token()).String()) // set by hand: kept
	if code, body := call(req); code != http.StatusConflict || !strings.Contains(body, "stale") {
		t.Fatalf("older token: %d %q", code, body)
	}
	req, _ = http.NewRequestWithContext(ctx, "POST", srv.URL, nil)
	if code, body := call(req); code != http.StatusBadRequest || !strings.Contains(body, "no fencing token") {
		t.Fatalf("no lease: %d %q", code, body)
	}
	req, _ = http.NewRequestWithContext(ctx, "POST", srv.URL, nil)
	req.Header.Add(fence.Header, "1 a")
	req.Header.Add(fence.Header, "2 a")
	if code, body := call(req); code != http.StatusBadRequest || !strings.Contains(body, "invalid") {
		t.Fatalf("two tokens: %d %q", code, body)
	}
	read, err := c.Acquire(ctx, "shared", zklock.Read)
	must(t, err)
	defer read.Release(ctx)
	req, _ = http.NewRequestWithContext(read.Context(ctx), "POST", srv.URL, nil)
	if code, _ := call(req); code != http.StatusBadRequest {
		t.Fatalf("a read lease's call carried a token: %d", code)
	}
}
