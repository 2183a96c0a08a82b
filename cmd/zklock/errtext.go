package main

import (
	"fmt"
	"io"
	"strings"
)

// errPrefix is what errors of package zklock start with. The command
// prints its own prefix ("zklock run: "), so the program is named once.
const errPrefix = "zklock: "

// errText is err's message as the command prints it after its own prefix,
// on one line: every errPrefix that starts the message or an error wrapped
// inside it (after ": ") is dropped, whether the core's errors carry one
// or not, and newlines become "; ". Quoted text, such as a resource name
// that happens to contain "zklock: ", is left as it is.
func errText(err error) string {
	s := err.Error()
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		if !quoted && strings.HasPrefix(s[i:], errPrefix) && (b.Len() == 0 || strings.HasSuffix(b.String(), ": ")) {
			i += len(errPrefix) - 1
			continue
		}
		switch c := s[i]; {
		case c == '\n':
			b.WriteString("; ")
		case quoted && c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			b.WriteByte(s[i+1])
			i++
		default:
			quoted = quoted != (c == '"')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// retryErrors reports the errors of a command that keeps retrying (watch,
// top) on stderr when piped: one line per new error, not one per retry.
type retryErrors struct{ last string }

func (r *retryErrors) report(w io.Writer, cmd string, err error) {
	if msg := errText(err); msg != r.last {
		fmt.Fprintf(w, "zklock %s: %s (retrying)\n", cmd, msg)
		r.last = msg
	}
}

// reset forgets the last error, after a success.
func (r *retryErrors) reset() { r.last = "" }
