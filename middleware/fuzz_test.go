package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	zkmw "github.com/zklockkit/zklockkit/middleware"

	"github.com/zklockkit/zklockkit/internal/restmpl"
	"github.com/zklockkit/zklockkit/zklock"
)

// probe records what a request through the middleware came to: the
// resource its handler held, or the error the error handler got.
type probe struct {
	resource string
	err      error
}

func (p *probe) config(l zklock.Locker) zkmw.Config {
	return zkmw.Config{Locker: l, ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
		p.err = err
		zkmw.DefaultErrorHandler(w, r, err)
	}}
}

func (p *probe) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.resource = zkmw.LeaseFrom(r).Resource() })
}

// checkServed checks the answer to a request whose resource should be
// want: held under that name when it is a valid resource name, else
// answered 400 with an error matching zklock.ErrInvalidResource.
func (p *probe) checkServed(t *testing.T, what string, code int, want string) {
	t.Helper()
	if zklock.ValidateResource(want) != nil {
		if code != http.StatusBadRequest || !errors.Is(p.err, zklock.ErrInvalidResource) {
			t.Fatalf("%s: resource %q is invalid, yet the answer is %d (%v)", what, want, code, p.err)
		}
		return
	}
	if code != http.StatusOK || p.resource != want {
		t.Fatalf("%s: answered %d (%v), held %q; want 200 holding %q", what, code, p.err, p.resource, want)
	}
}

// FuzzResourceTemplate drives the net/http middleware with any resource
// template and any request values, through a real request and the
// MemoryLocker:
//   - a template that does not parse is refused at set-up with an error
//     matching ErrInvalidConfig (and the template language's syntax
//     error), never at request time;
//   - one that parses locks exactly the name the template says: each
//     placeholder filled from its own part of the request (route
//     parameter, query, header or cookie), its value escaped so that it
//     cannot add a level;
//   - a request whose name is no valid resource (invalid UTF-8, a control
//     character, too long) or whose value is missing is answered 400 with
//     zklock.ErrInvalidResource, never 500.
func FuzzResourceTemplate(f *testing.F) {
	seed(f, "42", "accounts/{id}", "t/{header:X-Tenant}/a/{id}/{id}", "{query:currency}/{header:x-tenant}", "s/{cookie:session}",
		"{{literal}}/{id}", "files/{*}", "a/{b", "{a}{b}", "{bogus:x}", "x/{query:}", "{cookie:a b}", "é/{query:ü}")
	seed(f, "", "a/{query:q}")
	seed(f, "a/../b%2F\x00", "a/{header:h}")
	seed(f, "\xff", "a/{param:id}")
	locker := zklock.NewMemoryLocker()
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		if tmpl == "" {
			return // no template: the route's path (FuzzServeMuxPattern)
		}
		p := &probe{}
		cfg := p.config(locker)
		cfg.Resource = tmpl
		cfg.Router.Param = func(_ *http.Request, name string) string { return "P" + value }
		rt, perr := restmpl.Parse(tmpl, "param", "query", "header", "cookie")
		mw, err := cfg.ToMiddleware()
		if (err != nil) != (perr != nil) {
			t.Fatalf("template %q: the middleware says %v, the template language %v", tmpl, err, perr)
		}
		if err != nil {
			if !errors.Is(err, zkmw.ErrInvalidConfig) || !errors.Is(err, restmpl.ErrSyntax) {
				t.Fatalf("template %q: %v; want ErrInvalidConfig and the syntax error", tmpl, err)
			}
			return
		}

		// Every part of the request carries the value, marked with the
		// part it is in; cookies carry it query-escaped (a cookie's value
		// cannot hold every byte).
		q := url.Values{}
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		var cookies []string
		vals := make([]string, len(rt.Placeholders()))
		for i, ph := range rt.Placeholders() {
			switch ph.Source {
			case "", "param":
				vals[i] = "P" + value
			case "query":
				vals[i] = "Q" + value
				q.Set(ph.Name, vals[i])
			case "header":
				if http.CanonicalHeaderKey(ph.Name) == "Cookie" {
					return // one header, two meanings
				}
				vals[i] = "H" + value
				req.Header.Set(ph.Name, vals[i])
			case "cookie":
				c := &http.Cookie{Name: ph.Name, Value: "C" + url.QueryEscape(value)}
				if c.Valid() == nil {
					vals[i] = c.Value
					cookies = append(cookies, c.String())
				} // else no client can send it: the value is missing
			}
		}
		if len(cookies) > 0 {
			req.Header.Add("Cookie", strings.Join(cookies, "; "))
		}
		req.URL.RawQuery = q.Encode()
		want, missing := "", false
		for i, lit := range rt.Literals() {
			want += lit
			if i < len(vals) {
				missing = missing || vals[i] == ""
				want += restmpl.Value(vals[i])
			}
		}
		rec := httptest.NewRecorder()
		mw(p.handler()).ServeHTTP(rec, req)
		if missing {
			if rec.Code != http.StatusBadRequest || !errors.Is(p.err, zklock.ErrInvalidResource) {
				t.Fatalf("template %q, a value missing: answered %d (%v); want 400", tmpl, rec.Code, p.err)
			}
			return
		}
		p.checkServed(t, "template "+tmpl, rec.Code, want)
	})
}

// FuzzServeMuxPattern checks the default resource of a route, with the
// standard library's ServeMux as the judge of patterns: for any pattern
// ServeMux accepts, the middleware (which reads the matched pattern with
// ParseServeMuxPattern) locks the route's path with its wildcards filled
// in by the request's values, escaped. The values go into the request
// path escaped, as a client sends them.
func FuzzServeMuxPattern(f *testing.F) {
	seed(f, "42", "/accounts/{id}/withdraw", "POST /accounts/{id}", "GET example.com/a/{x}", "/files/{path...}", "/{$}", "/a/{b}/{$}",
		"/health", "/a/", "/{a}/{b}/c", "/a}b/{c}", "/é/{x}", "/{x...}")
	seed(f, "x/y", "/a/{b}")
	seed(f, "x/../y", "/a/{b...}")
	seed(f, "\x7f", "/a/{b}")
	locker := zklock.NewMemoryLocker()
	f.Fuzz(func(t *testing.T, pattern, value string) {
		p := &probe{}
		mw, err := p.config(locker).ToMiddleware()
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		if !handle(mux, pattern, mw(p.handler())) {
			return // ServeMux refuses the pattern
		}
		if _, _, err := zkmw.ParseServeMuxPattern(pattern); err != nil {
			t.Fatalf("ServeMux takes %q; ParseServeMuxPattern: %v", pattern, err)
		}
		// ServeMux's reading: [METHOD blanks][HOST]/PATH.
		method, rest := "", pattern
		if i := strings.IndexAny(pattern, " \t"); i >= 0 {
			method, rest = pattern[:i], strings.TrimLeft(pattern[i+1:], " \t")
		}
		host, pth := "", rest
		if i := strings.IndexByte(rest, '/'); i > 0 {
			host, pth = rest[:i], rest[i:]
		}
		if method == "" {
			method = http.MethodGet
		}
		if method == http.MethodConnect || strings.Contains(pth, "%") || !clean(pth) {
			return // paths ServeMux treats apart, or that it would redirect
		}
		// The request path and the resource it should lock.
		v := "v" + value
		var reqPath, want strings.Builder
		segs := strings.Split(pth[1:], "/")
		for i, seg := range segs {
			reqPath.WriteByte('/')
			if i > 0 {
				want.WriteByte('/')
			}
			wild := strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")
			name := strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}")
			switch {
			case !wild:
				reqPath.WriteString(url.PathEscape(seg))
				want.WriteString(seg)
			case name == "$":
			case strings.HasSuffix(name, "..."):
				// the rest of the path, two segments of it
				reqPath.WriteString(url.PathEscape(v) + "/" + url.PathEscape(v))
				want.WriteString(restmpl.Value(v + "/" + v))
			default:
				reqPath.WriteString(url.PathEscape(v))
				want.WriteString(restmpl.Value(v))
			}
		}
		if want.Len() == 0 {
			want.WriteString("/") // the root's resource (the empty name is none)
		}
		req := httptest.NewRequest(method, "http://example.org"+reqPath.String(), nil)
		if host != "" {
			req.Host = host
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code == http.StatusNotFound && p.err == nil && p.resource == "" {
			return // the request does not reach the pattern (another host form, a method ServeMux reads apart)
		}
		if !utf8.ValidString(pth) || strings.ContainsFunc(pth, unicode.IsControl) {
			// The route's own path is no resource name, whatever the
			// request: the programmer's error, answered 500.
			if rec.Code != http.StatusInternalServerError || !errors.Is(p.err, zkmw.ErrInvalidConfig) {
				t.Fatalf("pattern %q: answered %d (%v); want 500 with ErrInvalidConfig", pattern, rec.Code, p.err)
			}
			return
		}
		p.checkServed(t, "pattern "+pattern+", request "+method+" "+reqPath.String(), rec.Code, want.String())
	})
}

// seed adds each of inputs to f's corpus, with value.
func seed(f *testing.F, value string, inputs ...string) {
	for _, in := range inputs {
		f.Add(in, value)
	}
}

// handle registers h at pattern and reports whether ServeMux took the
// pattern (it panics on one it refuses).
func handle(mux *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	mux.Handle(pattern, h)
	return true
}

// clean reports whether ServeMux serves p as it is, without redirecting
// to a cleaned path.
func clean(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
