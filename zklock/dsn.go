package zklock

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// EnvPassword is the environment variable a connection string's digest
// password is read from when the string names a user and gives no
// password (see Open).
const EnvPassword = "ZKLOCK_PASSWORD"

// defaultPort is the port of a server given without one.
const defaultPort = 2181

// Open connects using a connection string, the way sql.Open takes a DSN.
// It takes ZooKeeper's own connect string, the one Curator, kazoo, Kafka
// and zkCli take, and a zk:// URL:
//
//	127.0.0.1:2181
//	h1:2181,h2:2181,h3:2181/app
//	h1,h2,h3/app?session_timeout=10s
//	[::1]:2181
//	zk://h1:2181,h2:2181/app?session_timeout=10s&label=worker
//	zk://app@h1,h2/app?password_file=/run/secrets/zk
//
// The grammar:
//
//	dsn      = [ "zk://" [ userinfo "@" ] ] hosts [ path ] [ "?" params ] .
//	hosts    = host { "," host } .
//	host     = ( name | ipv4 | "[" ipv6 "]" ) [ ":" port ] .
//	path     = "/" | znode path .
//	params   = param { "&" param } .
//	param    = "session_timeout=" duration | "loss_margin=" duration
//	         | "label=" text | "password_file=" file path .
//	userinfo = user [ ":" password ] .
//
// A host without a port gets defaultPort; a port is a number from 1 to
// 65535; a host may appear once; blanks around a host are ignored. An
// IPv6 address is written in brackets: a bare ::1 is refused, since its
// last group could be read as a port. The path, when not just "/", is
// the root under which named resources' queues live (WithRoot), and it is
// ZooKeeper's chroot for RawPath resources: "/locks/job" on "zk1/app" is
// /app/locks/job, as in Curator or kazoo connected to "zk1/app". A
// "?" always starts the parameters, in both forms (a root holding "?" is
// written %3F in the zk:// form), and each parameter may appear once, with
// a value; durations are Go's (10s, 1500ms). In the zk:// form the path,
// the user and the password are percent-decoded (write "@" as %40); the
// native form is taken as written, as ZooKeeper does; hosts are never
// decoded. Anything else, such as an empty part between commas, an
// unknown scheme or parameter, or a root that is not a valid znode path,
// is an error matching ErrInvalidOption whose message names the part; the
// password is never part of a message.
//
// User info in the zk:// form authenticates with a digest (WithDigestAuth).
// The password comes from exactly one of: the file named by password_file
// (a regular file of at most 4 KiB, one trailing newline dropped: a
// mounted secret, the recommended way), the URL (zk://app:pa%24%24@h1,
// handy on a workstation, but the string then shows up wherever it is
// passed, logged or printed), or, when the string gives neither, the
// EnvPassword variable. A user without a password is an error. The native
// form takes no user info. See docs/connecting.md.
//
// Options given to Open apply after the ones from the string, so they
// override them.
func Open(ctx context.Context, dsn string, opts ...Option) (*Client, error) {
	servers, dsnOpts, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return Connect(ctx, servers, append(dsnOpts, opts...)...)
}

// ParseDSN splits a connection string (see Open) into servers, as
// "host:port" or "[ipv6]:port" with the default port filled in, and
// options. It reads the password file or EnvPassword when the string asks
// for them, and touches no network.
func ParseDSN(dsn string) (servers []string, opts []Option, err error) {
	d, err := parseDSN(dsn)
	if err != nil {
		return nil, nil, err
	}
	return d.servers, d.opts, nil
}

// dsnParser holds a connection string being parsed.
type dsnParser struct {
	raw     string // trimmed, as given
	url     bool   // zk:// form
	servers []string
	root    string // "": none given
	opts    []Option
	secrets []string // never shown in a message (secrets)
}

// bad returns an error naming the connection string, its secrets masked,
// also in the details, which may quote parts of it.
func (d *dsnParser) bad(format string, a ...any) error {
	return fmt.Errorf("%w: connection string %q: %s", ErrInvalidOption, redact(d.raw), scrub(fmt.Sprintf(format, a...), d.secrets))
}

func parseDSN(dsn string) (*dsnParser, error) {
	d := &dsnParser{raw: strings.TrimSpace(dsn)}
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
func (d *dsnParser) misplacedUserInfo() error {
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
func (d *dsnParser) parseRoot(path string) error {
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
	if err := validateZnodePath(path); err != nil {
		reason := err.Error()
		if re := (*ResourceError)(nil); errors.As(err, &re) {
			reason = re.Reason
		}
		return d.bad("root %q: %s", path, reason)
	}
	d.root = path
	d.opts = append(d.opts, WithRoot(path), withChroot(path))
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
// last one before them.
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
		if q := strings.IndexByte(info, '?'); q >= 0 && strings.Contains(info[q:], "=") && strings.IndexByte(info, ':') < q {
			limit = start + q
			continue
		}
		return start, at, true
	}
}

// redact masks the secrets of s (secretSpans), even in a string that does
// not parse.
func redact(s string) string {
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
