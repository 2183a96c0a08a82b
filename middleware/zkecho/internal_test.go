package zkecho

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/labstack/echo/v4"
)

// Requests Echo routes to its 404 or 405 handlers are not locked.
func TestRouteMatchedOnlyForRealRoutes(t *testing.T) {
	e := echo.New()
	var matched []bool
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { matched = append(matched, routeMatched(c)); return next(c) }
	})
	h := func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }
	e.POST("/accounts/:id/withdraw", h)
	e.GET("/health", h)
	e.GET(`/time\:now`, h)
	for _, r := range []struct {
		method, target string
		code           int
	}{
		{http.MethodPost, "/accounts/1/withdraw", 204},
		{http.MethodGet, "/accounts/1/withdraw", 405},
		{http.MethodGet, "/nope", 404},
		{http.MethodGet, "/health", 204},
		{http.MethodPost, "/health", 405},
		{http.MethodGet, "/time:now", 204},
	} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(r.method, r.target, nil))
		if rec.Code != r.code {
			t.Fatalf("%s %s: %d", r.method, r.target, rec.Code)
		}
	}
	if want := []bool{true, false, false, true, false, true}; !slices.Equal(matched, want) {
		t.Fatalf("matched = %v, want %v", matched, want)
	}
}
