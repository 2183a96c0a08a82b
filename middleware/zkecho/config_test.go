package zkecho_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	zkmw "github.com/zklockkit/zklockkit/middleware/zkecho"
	"github.com/zklockkit/zklockkit/zklock"
)

// Bad configuration is an error at set-up (ToMiddleware), or a panic at
// set-up (Lock, LockWithConfig), never a failure at request time.
func TestIntegration_ConfigErrors(t *testing.T) {
	c := newClient(t, newRoot(t))
	fn := func(echo.Context) (string, error) { return "x", nil }
	for _, tc := range []struct {
		name string
		cfg  zkmw.Config
		want string
	}{
		{"no locker", zkmw.Config{}, "no Locker"},
		{"unknown mode", zkmw.Config{Locker: c, Rule: zkmw.Rule{Mode: zklock.Mode(9)}}, "a route locks Exclusive, Read or Write"},
		{"semaphore mode", zkmw.Config{Locker: c, Rule: zkmw.Rule{Mode: zklock.Semaphore}}, "a route locks Exclusive, Read or Write"},
		{"read-write with a mode", zkmw.Config{Locker: c, Rule: zkmw.Rule{Mode: zklock.Read, ReadWrite: true}}, "ReadWrite picks the mode"},
		{"negative wait", zkmw.Config{Locker: c, Rule: zkmw.Rule{MaxWait: -time.Second}}, "negative MaxWait"},
		{"try and wait", zkmw.Config{Locker: c, Rule: zkmw.Rule{Try: true, MaxWait: time.Second}}, "Try and MaxWait exclude each other"},
		{"template and func", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "a"}, ResourceFunc: fn}, "exclude"},
		{"unterminated", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{id"}}, "unterminated placeholder"},
		{"unmatched", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/id}"}}, "unexpected }"},
		{"empty placeholder", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{}"}}, "empty placeholder"},
		{"nested", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{a{b}}"}}, "unterminated placeholder"},
		{"unknown source", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "{metadata:id}"}}, "unknown source"},
		{"adjacent placeholders", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "{query:a}-{query:b}"}}, "separated by text containing"},
		{"resource and resources", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resource: "a", Resources: []string{"b", "c"}}}, "exclude"},
		{"template listed twice", zkmw.Config{Locker: c, Rule: zkmw.Rule{Resources: []string{"a/{id}", "b", "a/{id}"}}}, "listed twice"},
		{"limit with mode", zkmw.Config{Locker: c, Rule: zkmw.Rule{Limit: 2, ReadWrite: true}}, "Limit"},
		{"negative limit", zkmw.Config{Locker: c, Rule: zkmw.Rule{Limit: -1}}, "negative Limit"},
		{"negative retry", zkmw.Config{Locker: c, RetryAfter: -1}, "RetryAfter"},
		{"negative release timeout", zkmw.Config{Locker: c, ReleaseTimeout: -1}, "ReleaseTimeout"},
		{"rule and routes", zkmw.Config{Locker: c, Rule: zkmw.Rule{Try: true},
			Routes: map[string]zkmw.Rule{"POST /a": {}}}, "not both"},
		{"key without method", zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{"/a": {}}}, "METHOD /path"},
		{"lower-case method", zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{"post /a": {}}}, "upper case"},
		{"param not in route", zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
			"POST /accounts/:id/withdraw": {Resource: "accounts/{account}"}}}, `no parameter "account"`},
		{"listed twice", zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
			"POST /a": {}, "POST a": {}}}, "listed twice"},
		{"bad rule in table", zkmw.Config{Locker: c, Routes: map[string]zkmw.Rule{
			"POST /a": {Try: true, MaxWait: time.Second}}}, "exclude"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mw, err := tc.cfg.ToMiddleware()
			if !errors.Is(err, zkmw.ErrInvalidConfig) || mw != nil {
				t.Fatalf("ToMiddleware = %v, %v; want ErrInvalidConfig", mw != nil, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(tc.want, "Try and MaxWait") && !errors.Is(err, zklock.ErrInvalidOption) {
				t.Fatalf("error %q does not match zklock.ErrInvalidOption, as the core's refusal does", err)
			}
			func() {
				defer func() {
					if r, _ := recover().(error); !errors.Is(r, zkmw.ErrInvalidConfig) {
						t.Fatalf("LockWithConfig panic = %v, want ErrInvalidConfig", r)
					}
				}()
				zkmw.LockWithConfig(tc.cfg)
			}()
		})
	}

	// Good configurations, including the forms in the package doc.
	for _, cfg := range []zkmw.Config{
		{Locker: c},
		{Locker: c, Rule: zkmw.Rule{Resource: "accounts/{id}/{query:currency}/{header:X-Tenant}/{param:id}/{*}"}},
		{Locker: c, Rule: zkmw.Rule{Resource: "global-report", Mode: zklock.Write, Try: true}},
		{Locker: c, Rule: zkmw.Rule{Resources: []string{"accounts/{from}", "accounts/{to}"}, Limit: 3}},
		{Locker: c, ResourceFunc: fn},
		{Locker: c, Routes: map[string]zkmw.Rule{
			"POST /accounts/:id/withdraw": {Resource: "accounts/{id}"},
			"GET /accounts/:id":           {Resource: "accounts/{id}", ReadWrite: true},
			"* /files/*":                  {Resource: "files/{*}", MaxWait: time.Second},
		}},
	} {
		if _, err := cfg.ToMiddleware(); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
	_ = zkmw.Lock(c, zkmw.Resource("accounts/{id}"), zkmw.ReadWrite(), zkmw.MaxWait(time.Second), nil)
	_ = zkmw.Lock(c, zkmw.ResourceFunc(fn), zkmw.Try())
	_ = zkmw.Lock(c, zkmw.Resource("a/{x}", "b/{y}"), zkmw.Limit(2))
	var _ zklock.Locker = c
}

// CheckRoutes reports table keys that match no registered route.
func TestCheckRoutes(t *testing.T) {
	e := echo.New()
	h := func(echo.Context) error { return nil }
	e.POST("/accounts/:id/withdraw", h)
	e.GET("/accounts/:id", h)
	cfg := zkmw.Config{Routes: map[string]zkmw.Rule{
		"POST /accounts/:id/withdraw": {},
		"* /accounts/:id":             {},
	}}
	if err := cfg.CheckRoutes(e.Routes()); err != nil {
		t.Fatal(err)
	}
	cfg.Routes["POST /acounts/:id/withdraw"] = zkmw.Rule{}
	cfg.Routes["PUT /accounts/:id"] = zkmw.Rule{}
	err := cfg.CheckRoutes(e.Routes())
	if !errors.Is(err, zkmw.ErrInvalidConfig) || !strings.Contains(err.Error(), `["POST /acounts/:id/withdraw" "PUT /accounts/:id"]`) {
		t.Fatalf("CheckRoutes = %v", err)
	}
}
