package fence

import (
	"context"
	"fmt"
	"net/http"

	"github.com/zklockkit/zklockkit/zklock"
)

// Header is the HTTP header that carries a fencing token between
// processes, in the form Token.String writes ("4294967302 accounts%2F42").
const Header = "Zklock-Fence-Token"

// Transport returns an http.RoundTripper that adds Header to every request
// whose context carries a lease that can be fenced (zklock.LeaseFromContext
// and TokenOf), then sends it with base (http.DefaultTransport if nil).
// A request without such a lease, or that already has the header, goes
// out unchanged: the server decides whether it needs a token.
//
//	client := &http.Client{Transport: fence.Transport(nil)}
//	req, _ := http.NewRequestWithContext(lease.Context(ctx), "POST", url, body)
//	resp, err := client.Do(req) // carries lease's token and resource
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	tok, ok := ContextToken(r.Context())
	if !ok || r.Header.Get(Header) != "" {
		return t.base.RoundTrip(r)
	}
	// A RoundTripper must not modify the request it is given.
	r2 := r.Clone(r.Context())
	r2.Header.Set(Header, tok.String())
	return t.base.RoundTrip(r2)
}

// ContextToken returns the token of the lease ctx carries, if there is one
// and it can be fenced (TokenOf).
func ContextToken(ctx context.Context) (Token, bool) {
	l := zklock.LeaseFromContext(ctx)
	if l == nil {
		return Token{}, false
	}
	t, err := TokenOf(l)
	return t, err == nil
}

// FromRequest returns the token a request carries in Header: ErrNoToken
// if it carries none, ErrInvalidToken if the header is given more than once
// or does not parse.
//
// Anyone can write a header: accept tokens only from authenticated peers
// (see the package doc on what a token proves).
func FromRequest(r *http.Request) (Token, error) {
	vs := r.Header.Values(Header)
	switch len(vs) {
	case 0:
		return Token{}, fmt.Errorf("%w: the request has no %s header", ErrNoToken, Header)
	case 1:
		return ParseToken(vs[0])
	}
	return Token{}, fmt.Errorf("%w: %d %s headers", ErrInvalidToken, len(vs), Header)
}

// GuardRequest is Guard with the token r carries (FromRequest).
func (f *Fence) GuardRequest(ctx context.Context, tx Tx, r *http.Request) error {
	t, err := FromRequest(r)
	if err != nil {
		return err
	}
	return f.Guard(ctx, tx, t)
}
