package zklock

import (
	"strings"
	"unicode/utf8"
)

// MaxResourceLen is the longest resource name accepted, in bytes before
// escaping. Escaping can triple it; the result stays far below ZooKeeper's
// packet limit.
const MaxResourceLen = 1024

// EscapeResource maps a resource name to the single znode name that holds its
// lock queue under the root. The mapping is injective and reversible
// (UnescapeResource): bytes in [A-Za-z0-9._-] are kept, every other byte is
// written as %XX (upper-case hex), and the names "." and ".." are written as
// "%2E" and "%2E%2E". The result never contains "/", so no resource name can
// reach outside the root. EscapeResource does not validate; ValidateResource
// does.
func EscapeResource(r string) string {
	if r == "." || r == ".." {
		return strings.Repeat("%2E", len(r))
	}
	var b strings.Builder
	b.Grow(len(r) + 8)
	for i := 0; i < len(r); i++ {
		c := r[i]
		if isSafe(c) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// UnescapeResource reverses EscapeResource. It reports false for a name that
// EscapeResource cannot have produced.
func UnescapeResource(name string) (string, bool) {
	if name == "" || name == "." || name == ".." {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case isSafe(c):
			b.WriteByte(c)
		case c == '%' && i+2 < len(name) && isUpperHex(name[i+1]) && isUpperHex(name[i+2]):
			v := unhex(name[i+1])<<4 | unhex(name[i+2])
			if isSafe(v) && v != '.' {
				return "", false // would have been kept as is
			}
			b.WriteByte(v)
			i += 2
		default:
			return "", false
		}
	}
	r := b.String()
	if EscapeResource(r) != name {
		return "", false
	}
	return r, true
}

// ValidateResource reports whether r can be used as a resource name: not
// empty, at most MaxResourceLen bytes, valid UTF-8, free of control
// characters, and not starting with "/". A name that starts with "/"
// looks like a znode path, and is refused rather than escaped into a
// queue that a Curator or kazoo service locking that path would never
// meet: such a path is given with RawPath. The error is a *ResourceError.
func ValidateResource(r string) error {
	switch {
	case r == "":
		return &ResourceError{Resource: r, Reason: "empty name"}
	case r[0] == '/':
		return &ResourceError{Resource: r, Reason: `starts with "/": a name is not a znode path; to lock this znode, as Curator and kazoo do, pass RawPath()`}
	case len(r) > MaxResourceLen:
		return &ResourceError{Resource: r, Reason: "longer than 1024 bytes"}
	case !utf8.ValidString(r):
		return &ResourceError{Resource: r, Reason: "not valid UTF-8"}
	}
	for _, c := range r {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return &ResourceError{Resource: r, Reason: "contains a control character"}
		}
	}
	return nil
}

// validateZnodePath checks an absolute znode path given with RawPath or
// WithRoot: it must start with "/", have no empty, "." or ".." segment, no
// trailing slash, no control characters, and not be "/" or under
// "/zookeeper".
func validateZnodePath(p string) error {
	switch {
	case p == "" || p[0] != '/':
		return &ResourceError{Resource: p, Reason: "raw path must be absolute"}
	case p == "/":
		return &ResourceError{Resource: p, Reason: "raw path must not be the root"}
	case len(p) > 3*MaxResourceLen:
		return &ResourceError{Resource: p, Reason: "path too long"}
	case !utf8.ValidString(p):
		return &ResourceError{Resource: p, Reason: "not valid UTF-8"}
	case p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/"):
		return &ResourceError{Resource: p, Reason: "path is reserved by ZooKeeper"}
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || (c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xffff) {
			return &ResourceError{Resource: p, Reason: "contains a character ZooKeeper forbids"}
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return &ResourceError{Resource: p, Reason: "empty, \".\" or \"..\" path segment"}
		}
	}
	return nil
}

func isSafe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// idClass replaces identifier segments in ResourceClass.
const idClass = "{id}"

// ResourceClass is a resource's class, for metrics and profiles that must
// not have one series per resource: the resource name with every segment that looks like an identifier
// replaced by "{id}". Segments are separated by "/" or ":"; a segment is an
// identifier when it is all decimal digits, a UUID (8-4-4-4-12 hex digits),
// or at least 16 hex digits. A multi-resource name ("a/1,b/2") is
// classified part by part.
//
//	accounts/42                                   → accounts/{id}
//	orders:7f3c2a9e-0b1d-4c5e-9f00-112233445566   → orders:{id}
//	blobs/9f86d081884c7d65/meta                   → blobs/{id}/meta
//	accounts/1,accounts/2                         → accounts/{id},accounts/{id}
//	reports/daily                                 → reports/daily
func ResourceClass(resource string) string {
	if !hasID(resource) {
		return resource // the common case allocates nothing
	}
	var b strings.Builder
	b.Grow(len(resource))
	start := 0
	for i := 0; i <= len(resource); i++ {
		if i < len(resource) && !isSep(resource[i]) {
			continue
		}
		if seg := resource[start:i]; isID(seg) {
			b.WriteString(idClass)
		} else {
			b.WriteString(seg)
		}
		if i < len(resource) {
			b.WriteByte(resource[i])
		}
		start = i + 1
	}
	return b.String()
}

func isSep(c byte) bool { return c == '/' || c == ':' || c == ',' }

func hasID(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || isSep(s[i]) {
			if isID(s[start:i]) {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func isID(seg string) bool {
	if seg == "" {
		return false
	}
	digits, hex := true, true
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c < '0' || c > '9' {
			digits = false
		}
		if !isHex(c) {
			hex = false
		}
	}
	return digits || hex && len(seg) >= 16 || isUUID(seg)
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
