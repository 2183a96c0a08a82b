package fence

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zklockkit/zklockkit/zklock"
)

// MaxResourceLen is the longest resource accepted, in bytes: room for any
// zklock resource name and for raw znode paths of ordinary length, and
// below PostgreSQL's limit on an index entry.
const MaxResourceLen = 2048

// Holder is what the fence needs from a lease: the resource it locks and
// its fencing token. *zklock.Lease implements it; so does Token.
type Holder interface {
	Resource() string
	Token() int64
}

var (
	_ Holder = (*zklock.Lease)(nil)
	_ Holder = Token{}
)

// Token is a fencing token together with the resource it fences: a token
// without its resource means nothing. It is what travels between processes
// (see Transport and FromRequest) and what a fence stores, per resource.
type Token struct {
	resource string
	value    int64
}

// NewToken returns the token value for resource. It does not validate;
// Guard and String do.
func NewToken(resource string, value int64) Token { return Token{resource: resource, value: value} }

// Resource returns the resource the token fences: the lease's resource
// name (for a lease taken with zklock.RawPath, its queue's znode path).
func (t Token) Resource() string { return t.resource }

// Token returns the token's value, the czxid of the lease's node.
func (t Token) Token() int64 { return t.value }

// TokenOf returns the token of h, checked. For a *zklock.Lease (or any
// Holder with a Mode method) it refuses read and semaphore leases, and
// (with a Parts method) multi-resource leases, with ErrUnfenceable; it
// refuses a value below 1 or an invalid resource with ErrInvalidToken.
//
// TokenOf does not ask whether the lease is still held: a fence answers
// from what the store knows, which is the point (see the package doc).
func TokenOf(h Holder) (Token, error) {
	if h == nil {
		return Token{}, ErrNoToken
	}
	if t, ok := h.(Token); ok {
		return t, t.validate()
	}
	if m, ok := h.(interface{ Mode() zklock.Mode }); ok {
		switch mode := m.Mode(); mode {
		case zklock.Read, zklock.Semaphore:
			return Token{}, fmt.Errorf("%w: a %s lease of %q is shared with other holders", ErrUnfenceable, mode, h.Resource())
		}
	}
	if p, ok := h.(interface{ Parts() []zklock.Part }); ok && len(p.Parts()) > 1 {
		// Its Token is the largest of its parts', not every resource's:
		// Guard fences each part with its own (Lease.Parts); one carried
		// token cannot.
		return Token{}, fmt.Errorf("%w: a multi-resource lease (%q) has a token per resource: Guard it, or carry one part's", ErrUnfenceable, h.Resource())
	}
	t := Token{resource: h.Resource(), value: h.Token()}
	return t, t.validate()
}

func (t Token) validate() error {
	r := t.resource
	switch {
	case t.value < 1:
		return fmt.Errorf("%w: value %d for %q (tokens start at 1)", ErrInvalidToken, t.value, r)
	case r == "":
		return fmt.Errorf("%w: empty resource", ErrInvalidToken)
	case len(r) > MaxResourceLen:
		return fmt.Errorf("%w: resource of %d bytes (at most %d)", ErrInvalidToken, len(r), MaxResourceLen)
	case !utf8.ValidString(r):
		return fmt.Errorf("%w: resource %q is not valid UTF-8", ErrInvalidToken, r)
	}
	for _, c := range r {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			return fmt.Errorf("%w: resource %q contains a control character", ErrInvalidToken, r)
		}
	}
	return nil
}

// String returns the token as it travels in a header or metadata value:
// the decimal value, a space, and the resource escaped with
// zklock.EscapeResource (ASCII, no spaces), as in "4294967302
// accounts%2F42". ParseToken reverses it.
func (t Token) String() string {
	return strconv.FormatInt(t.value, 10) + " " + zklock.EscapeResource(t.resource)
}

// ParseToken parses the form String produces. Any other input, and a
// token that would not validate, is refused with ErrInvalidToken.
func ParseToken(s string) (Token, error) {
	num, esc, ok := strings.Cut(s, " ")
	if !ok || num == "" || len(num) > 19 || strings.TrimLeft(num, "0123456789") != "" {
		return Token{}, fmt.Errorf("%w: %q is not \"<token> <resource>\"", ErrInvalidToken, s)
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return Token{}, fmt.Errorf("%w: %q: %v", ErrInvalidToken, s, err)
	}
	r, ok := zklock.UnescapeResource(esc)
	if !ok {
		return Token{}, fmt.Errorf("%w: %q: resource not escaped as zklock.EscapeResource does", ErrInvalidToken, s)
	}
	t := Token{resource: r, value: v}
	return t, t.validate()
}
