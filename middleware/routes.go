package middleware

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// anyMethod is the method of a route table key that matches every method.
const anyMethod = "*"

// routeTable maps a route path pattern, then a method, to its rule.
type routeTable map[string]map[string]*rule

// lookup returns the rule of the request's route, or nil.
func (t routeTable) lookup(c echo.Context) *rule {
	byMethod := t[c.Path()]
	if byMethod == nil {
		return nil
	}
	if r := byMethod[c.Request().Method]; r != nil {
		return r
	}
	return byMethod[anyMethod]
}

// parseRouteKey splits "METHOD /path" and normalizes the path the way Echo
// does when a route is added (a missing leading slash is added).
func parseRouteKey(key string) (method, path string, err error) {
	fields := strings.Fields(key)
	if len(fields) != 2 {
		return "", "", fmt.Errorf("%w: route %q: want \"METHOD /path\"", ErrInvalidConfig, key)
	}
	method, path = fields[0], fields[1]
	if method != anyMethod {
		for i := 0; i < len(method); i++ {
			if method[i] < 'A' || method[i] > 'Z' {
				return "", "", fmt.Errorf("%w: route %q: method must be upper case or \"*\"", ErrInvalidConfig, key)
			}
		}
	}
	if path[0] != '/' {
		path = "/" + path
	}
	return method, path, nil
}

// CheckRoutes reports the keys of config.Routes that match none of routes,
// typically e.Routes() once every route is registered: a key with a typo
// would otherwise silently leave its route unlocked. The error matches
// ErrInvalidConfig.
func (config Config) CheckRoutes(routes []*echo.Route) error {
	var missing []string
	for key := range config.Routes {
		method, path, err := parseRouteKey(key)
		if err != nil {
			return err
		}
		found := slices.ContainsFunc(routes, func(r *echo.Route) bool {
			return r.Path == path && (method == anyMethod || r.Method == method)
		})
		if !found {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("%w: Routes keys match no registered route: %q", ErrInvalidConfig, missing)
	}
	return nil
}
