// Package dsn parses zklock's connection strings: ZooKeeper's own connect
// string (h1:2181,h2:2181/app) and zk:// URLs, their hosts, root,
// parameters and credentials, and masks their secrets in every message.
// Package zklock's Open and ParseDSN are its door; docs/connecting.md
// describes the grammar.
package dsn

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zklockkit/zklockkit/zklock/internal/errs"
)

// EnvPassword is the environment variable a connection string's digest
// password is read from when the string names a user and gives no
// password (zklock.EnvPassword).
const EnvPassword = "ZKLOCK_PASSWORD"

// DefaultPort is the port of a server given without one.
const DefaultPort = 2181

// DSN is a parsed connection string: what it sets, in the order zklock
// applies it as options.
type DSN struct {
	Servers []string // host:port, the default port filled in
	Root    string   // the root and chroot; "" when none is given
	// Params are the parameters that become client options, by name
	// (session_timeout, loss_margin: a time.Duration; label: a string).
	Params map[string]any
	// User and Password authenticate with a digest, when User is set.
	User, Password string
}

// Checks are the client's own rules that a connection string's parts
// must pass, reported against the part.
type Checks struct {
	// Root returns why a root cannot be used, or "".
	Root func(path string) string
	// Param returns why a parameter's value (see DSN.Params) cannot be
	// used, or nil.
	Param func(name string, value any) error
}

// Parse parses a connection string (see zklock.Open). It reads the
// password file or EnvPassword when the string asks for them, and touches
// no network. Errors match errs.ErrInvalidOption and never show a secret.
func Parse(s string, checks Checks) (*DSN, error) {
	d, err := parse(s, checks)
	if err != nil {
		return nil, err
	}
	return &d.DSN, nil
}

// parser holds a connection string being parsed.
type parser struct {
	DSN
	raw     string // trimmed, as given
	url     bool   // zk:// form
	checks  Checks
	secrets []string // never shown in a message (secrets)
}

// bad returns an error naming the connection string, its secrets masked,
// also in the details, which may quote parts of it.
func (d *parser) bad(format string, a ...any) error {
	return fmt.Errorf("%w: connection string %q: %s", errs.ErrInvalidOption, Redact(d.raw), scrub(fmt.Sprintf(format, a...), d.secrets))
}

func parse(dsn string, checks Checks) (*parser, error) {
	d := &parser{raw: strings.TrimSpace(dsn), checks: checks}
	d.secrets = secrets(d.raw)
	if d.raw == "" {
		return nil, d.bad("empty")
	}
	if err := d.misplacedUserInfo(); err != nil {
		return nil, err
	}
	rest := d.raw
	if scheme, after, ok := strings.Cut(rest, "://"); ok {
		if !strings.EqualFold(scheme, "zk") {
			return nil, d.bad("unknown scheme %q (want zk://, or ZooKeeper's connect string h1:2181,h2:2181/root)", scheme+"://")
		}
		d.url, rest = true, after
	}
	rest, query, hasQuery := strings.Cut(rest, "?")
	if d.url && strings.Contains(d.raw, "#") {
		return nil, d.bad(`"#" must be written %%23 in a zk:// URL`)
	}
	hosts, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hosts, path = rest[:i], rest[i:]
	}
	var user, password string
	var hasUser, hasPassword bool
	if i := strings.LastIndexByte(hosts, '@'); i >= 0 {
		if !d.url {
			user, _, _ := strings.Cut(hosts[:i], ":")
			return nil, d.bad("user info (%q) is only taken in the zk:// form: zk://%s@HOSTS..., with the password in password_file, the URL or $%s",
				user+"@", user, EnvPassword)
		}
		var err error
		if user, password, hasPassword, err = d.userInfo(hosts[:i]); err != nil {
			return nil, err
		}
		hosts, hasUser = hosts[i+1:], true
	}
	if err := d.parseHosts(hosts); err != nil {
		return nil, err
	}
	if err := d.parseRoot(path); err != nil {
		return nil, err
	}
	var passwordFile string
	if hasQuery {
		var err error
		if passwordFile, err = d.parseParams(query); err != nil {
			return nil, err
		}
	}
	if err := d.auth(hasUser, user, password, hasPassword, passwordFile); err != nil {
		return nil, err
	}
	return d, nil
}

// misplacedUserInfo refuses user info whose "@" is not among the hosts,
// where the parser looks for it: a password holding an unencoded "/", "?"
// or "#" would otherwise be read as a path or parameters, and parts of it
// quoted in a message.
func (d *parser) misplacedUserInfo() error {
	start, at, ok := userInfoEnd(d.raw)
	if !ok || strings.IndexByte(d.raw[start:at], ':') < 0 {
		return nil
	}
	if i := strings.IndexAny(d.raw[start:], "/?#"); i < 0 || start+i > at {
		return nil
	}
	if !strings.HasPrefix(strings.ToLower(d.raw), "zk://") {
		user, _, _ := strings.Cut(d.raw[start:at], ":")
		return d.bad("user info (%q) is only taken in the zk:// form: zk://%s@HOSTS..., with the password in password_file, the URL or $%s",
			user+"@", user, EnvPassword)
	}
	return d.bad(`user info: write "/", "?" and "#" in a password as %%2F, %%3F and %%23`)
}

// parseRoot takes the path after the hosts: the root.
func (d *parser) parseRoot(path string) error {
	if d.url {
		p, err := url.PathUnescape(path)
		if err != nil {
			return d.bad("root %q: bad percent-encoding", path)
		}
		path = p
	}
	if path == "" || path == "/" {
		return nil
	}
	if strings.HasSuffix(path, "/") {
		return d.bad("root %q: must not end with \"/\"", path)
	}
	if r, _ := utf8.DecodeLastRuneInString(path); unicode.IsSpace(r) {
		return d.bad("root %q: ends with a blank", path)
	}
	if d.checks.Root != nil {
		if reason := d.checks.Root(path); reason != "" {
			return d.bad("root %q: %s", path, reason)
		}
	}
	d.Root = path
	return nil
}

// mask is what a secret of a connection string is shown as.
const mask = "xxxxx"

// secretParam matches a parameter whose value is a secret, wherever it
// is in a string: password= is refused, but its value is still masked.
var secretParam = regexp.MustCompile(`(?i)(?:^|[?&])(?:password|passwd|pwd|secret|token)=([^&#]*)`)

// secretSpans returns where the secrets of s are, as [start, end) byte
// offsets, in order, even in a string that does not parse: the password
// of the user info and the values of parameters named like secrets. It
// errs on the side of masking: the user info ends at the last "@" before
// the parameters, also when an unencoded "/", "?" or "#" in the password
// moved that "@" out of the hosts (userInfoEnd).
func secretSpans(s string) [][2]int {
	var spans [][2]int
	if start, end, ok := userInfoEnd(s); ok {
		if colon := strings.IndexByte(s[start:end], ':'); colon >= 0 {
			spans = append(spans, [2]int{start + colon + 1, end})
		}
	}
	for _, m := range secretParam.FindAllStringSubmatchIndex(s, -1) {
		if m[3] > m[2] {
			spans = append(spans, [2]int{m[2], m[3]})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	return spans
}

// userInfoEnd returns where the user info of s starts (after a scheme)
// and ends (at its "@"), if s has one. The "@" is the last one of the
// string, or, when that one is inside the parameters ("label=a@b"), the
// last one before them. An "@" after a "?" and a "=" is a parameter's only
// if what comes before the "?" is a list of hosts: in
// zk://app:hunter2?x=1@h1 it ends the user info, whose password holds an
// unencoded "?" (the parser reads "hunter2" as a port, and its message
// would quote it).
func userInfoEnd(s string) (start, end int, ok bool) {
	if _, after, ok := strings.Cut(s, "://"); ok {
		start = len(s) - len(after)
	}
	limit := len(s)
	for {
		at := strings.LastIndexByte(s[start:limit], '@')
		if at < 0 {
			return 0, 0, false
		}
		at += start
		info := s[start:at]
		// A "?" followed by a "=" before the "@": the "@" is a parameter's.
		if q := strings.IndexByte(info, '?'); q >= 0 && strings.Contains(info[q:], "=") && strings.IndexByte(info, ':') < q && hostsLike(info[:q]) {
			limit = start + q
			continue
		}
		return start, at, true
	}
}

// hostsLike reports whether s, up to its first "/" and after an "@"
// before that (user info of its own), is a list of hosts that parses.
func hostsLike(s string) bool {
	hosts, _, _ := strings.Cut(s, "/")
	if i := strings.LastIndexByte(hosts, '@'); i >= 0 {
		hosts = hosts[i+1:]
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if _, err := parseHost(h); err != nil {
			return false
		}
	}
	return true
}

// Redact masks the secrets of s (secretSpans), even in a string that does
// not parse.
func Redact(s string) string {
	spans := secretSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		if sp[0] < last {
			continue // overlaps the one before
		}
		b.WriteString(s[last:sp[0]])
		b.WriteString(mask)
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// secrets returns the secrets of s, as written and percent-decoded, so
// that a message built from parts of s can be scrubbed of them.
func secrets(s string) []string {
	var out []string
	for _, sp := range secretSpans(s) {
		v := s[sp[0]:sp[1]]
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
		if d, err := url.PathUnescape(v); err == nil && d != v {
			out = append(out, d)
		}
	}
	// the longest first, so that a secret holding another is masked whole
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// scrub replaces every secret in msg with the mask. It is a safety net
// for details that quote parts of a string (misplacedUserInfo keeps the
// password out of those parts): secrets shorter than 4 bytes are left, or
// a password "p" would mask every "p" of the message.
func scrub(msg string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, mask)
		}
	}
	return msg
}
