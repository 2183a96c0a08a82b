package zklock

import "strings"

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
