package middleware

import (
	"net/http"

	"github.com/zklockkit/zklockkit/zklock"
)

// ruleMode is how a rule picks the zklock mode for a request.
type ruleMode struct {
	mode      zklock.Mode
	readWrite bool // GET and HEAD read, other methods write
}

// lockMode returns the zklock mode for a request method.
func (m ruleMode) lockMode(method string) zklock.Mode {
	if m.readWrite {
		if method == http.MethodGet || method == http.MethodHead {
			return zklock.Read
		}
		return zklock.Write
	}
	return m.mode
}
