package zklock_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zklock"
)

// escapePassword writes a password as the zk:// grammar asks: "%", "/",
// "?", "#" and "@" percent-encoded, everything else as it is.
func escapePassword(p string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F", "?", "%3F", "#", "%23", "@", "%40").Replace(p)
}

// dsnError returns ParseDSN's error message for dsn, "" if it parses.
func dsnError(t *testing.T, dsn string) string {
	t.Helper()
	servers, _, err := zklock.ParseDSN(dsn)
	if err == nil {
		return ""
	}
	if !errors.Is(err, zklock.ErrInvalidOption) || servers != nil {
		t.Fatalf("ParseDSN(%q) = %q, %v; want only an error matching ErrInvalidOption", dsn, servers, err)
	}
	return err.Error()
}

// FuzzParseDSNHidesPassword checks that a connection string's password
// never shows in ParseDSN's error, whatever else is wrong with the
// string: with a password written as the grammar asks (percent-encoded
// where it must be), in the zk:// form and in the native one (which takes
// no user info at all), the message neither holds the password as
// written nor decoded. The judge is a second parse of the same string
// with another password of the same length: text of the password that
// shows in both messages came from elsewhere in the string (a host, the
// root, a fixed word of the message), not from the password.
func FuzzParseDSNHidesPassword(f *testing.F) {
	for _, s := range [][3]string{
		{"app", "s3cret", "h1:2181"}, {"app", "s3cret", "h1:99999"}, {"app", "s3cret", "h1/bad/"}, {"app", "s3cret", "h1?x=1"},
		{"app", "s3 cret", "h1,,h2"}, {"app", "p@ss/w?rd#", "h1?password_file=/x"}, {"app", "pa:ss", "[::1"}, {"app", "%zz%", "h1"},
		{"app", "secret", "secret:1"}, {"a", "long password here", "h1/a%zz"}, {"app", "hunter2", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, user, password, rest string) {
		if password == "" || strings.ContainsAny(user, ":/?#@") {
			return // not a user and a password
		}
		alt := strings.Repeat("\x01", len(password)) // a password no message quotes by chance
		for _, form := range []string{"zk://", ""} {
			written := form + user + ":" + escapePassword(password) + "@" + rest
			msg := dsnError(t, written)
			if msg == "" {
				continue
			}
			altMsg := dsnError(t, form+user+":"+escapePassword(alt)+"@"+rest)
			// as written, decoded, and as %q shows either
			shown := []string{password, escapePassword(password)}
			for _, p := range shown[:2] {
				q := strconv.Quote(p)
				shown = append(shown, q[1:len(q)-1])
			}
			for _, p := range shown {
				if strings.Contains(msg, p) && !strings.Contains(altMsg, p) {
					t.Fatalf("ParseDSN(%q): the error shows the password %q: %s", written, p, msg)
				}
			}
		}
	})
}
