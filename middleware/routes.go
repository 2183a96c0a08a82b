package middleware

import (
	"fmt"
	"slices"
	"strings"
)

// anyMethod is the method of a route table key that matches every method.
const anyMethod = "*"

// routeTable maps a route pattern, then a method, to its rule.
type routeTable map[string]map[string]*rule

// lookup returns the rule of a route, or nil.
func (t routeTable) lookup(method, pattern string) *rule {
	byMethod := t[pattern]
	if byMethod == nil {
		return nil
	}
	if r := byMethod[method]; r != nil {
		return r
	}
	return byMethod[anyMethod]
}

// parseRouteKey splits "METHOD /pattern"; a missing leading slash is
// added, as Echo does when a route is added.
func parseRouteKey(key string) (method, pattern string, err error) {
	fields := strings.Fields(key)
	if len(fields) != 2 {
		return "", "", fmt.Errorf("%w: route %q: want \"METHOD /path\"", ErrInvalidConfig, key)
	}
	method, pattern = fields[0], fields[1]
	if method != anyMethod {
		for i := 0; i < len(method); i++ {
			if method[i] < 'A' || method[i] > 'Z' {
				return "", "", fmt.Errorf("%w: route %q: method must be upper case or \"*\"", ErrInvalidConfig, key)
			}
		}
	}
	if pattern[0] != '/' {
		pattern = "/" + pattern
	}
	return method, pattern, nil
}

// splitPattern splits a ServeMux pattern "[METHOD ][HOST]/PATH" into its
// method ("" for any) and the rest, as ServeMux does: the method ends at
// the first blank (space or tab). A blank after a "/" is in the path (a
// method holds no "/"), so a pattern already without its method is taken
// whole: "/a b/{id}" has no method.
func splitPattern(p string) (method, rest string) {
	i := strings.IndexAny(p, " \t")
	if i < 0 || strings.Contains(p[:i], "/") {
		return "", p
	}
	return p[:i], strings.TrimLeft(p[i+1:], " \t")
}

// PatternParser reads a route pattern of a router: the names of its
// parameters, in order, and the pattern as a resource template (the
// default resource of a route: its path without the leading slash, with
// a placeholder for each parameter).
type PatternParser func(pattern string) (params []string, template string, err error)

// ParseServeMuxPattern is the PatternParser of the standard library's
// ServeMux (Go 1.22 patterns: "/accounts/{id}", "/files/{path...}",
// "/{$}"), which also reads chi and gorilla/mux patterns ("{id:[0-9]+}":
// the regular expression is dropped). A method or host before the path is
// dropped.
func ParseServeMuxPattern(pattern string) ([]string, string, error) {
	_, p := splitPattern(pattern)
	if i := strings.IndexByte(p, '/'); i > 0 {
		p = p[i:] // drop the host
	}
	var params []string
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '{':
			depth, j := 1, i+1
			for ; j < len(p) && depth > 0; j++ {
				switch p[j] {
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			if depth > 0 {
				return nil, "", fmt.Errorf("unterminated '{' in pattern %q", pattern)
			}
			name := p[i+1 : j-1]
			name, _, _ = strings.Cut(name, ":")
			name = strings.TrimSuffix(name, "...")
			i = j - 1
			if name == "$" {
				continue
			}
			if name == "" {
				return nil, "", fmt.Errorf("empty wildcard in pattern %q", pattern)
			}
			params = append(params, name)
			b.WriteString("{" + name + "}")
		case '}':
			b.WriteString("}}")
		default:
			b.WriteByte(c)
		}
	}
	return params, trimRoot(b.String()), nil
}

// ParseEchoPattern is the PatternParser of Echo's router (v4 and v5):
// ":id" is a parameter up to the next "/", "*" the wildcard (named "*"),
// "\:" a literal colon.
func ParseEchoPattern(pattern string) ([]string, string, error) {
	var params []string
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '\\':
			if i+1 < len(pattern) && pattern[i+1] == ':' {
				b.WriteByte(':')
				i++
				continue
			}
			b.WriteByte(c)
		case ':':
			j := i + 1
			for j < len(pattern) && pattern[j] != '/' {
				j++
			}
			name := pattern[i+1 : j]
			params = append(params, name)
			b.WriteString("{" + name + "}")
			i = j - 1
		case '*':
			params = append(params, "*")
			b.WriteString("{*}")
		case '{':
			b.WriteString("{{")
		case '}':
			b.WriteString("}}")
		default:
			b.WriteByte(c)
		}
	}
	return params, trimRoot(b.String()), nil
}

func trimRoot(p string) string {
	if len(p) > 1 && p[0] == '/' {
		return p[1:]
	}
	return p
}

// checkRoutes reports the keys of routes that match none of registered,
// given as method and pattern pairs ("" or "*" method: any).
func checkRoutes(routes map[string]Rule, registered [][2]string) error {
	var missing []string
	for key := range routes {
		method, pattern, err := parseRouteKey(key)
		if err != nil {
			return err
		}
		found := slices.ContainsFunc(registered, func(r [2]string) bool {
			return r[1] == pattern && (method == anyMethod || r[0] == method || r[0] == "" || r[0] == anyMethod)
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

// CheckRoutes reports the keys of config.Routes that match none of
// routes, the routes registered with the router ("POST /accounts/{id}" or
// a pattern without a method, which matches any): a key with a typo would
// otherwise silently leave its route unlocked. The error matches
// ErrInvalidConfig. The Echo adapters have their own CheckRoutes, which
// takes e.Routes().
func (config Config) CheckRoutes(routes []string) error {
	var reg [][2]string
	for _, r := range routes {
		m, p := splitPattern(r)
		reg = append(reg, [2]string{m, p})
	}
	return checkRoutes(config.Routes, reg)
}
