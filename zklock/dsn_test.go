package zklock

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/dsn"
	"github.com/zklockkit/zklockkit/zktest"
)

// dsnResult is what a connection string configures.
type dsnResult struct {
	servers        []string
	root           string
	sessionTimeout time.Duration
	lossMargin     time.Duration
	label          string
	auth           string // "user:password" of the digest auth, if any
}

func parseForTest(t testing.TB, dsn string) (dsnResult, error) {
	servers, opts, err := ParseDSN(dsn)
	if err != nil {
		return dsnResult{}, err
	}
	cfg := defaultClientConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.err != nil {
		t.Fatalf("ParseDSN(%q) returned options that fail: %v", dsn, cfg.err)
	}
	r := dsnResult{servers: servers, root: cfg.root, sessionTimeout: cfg.sessionTimeout, lossMargin: cfg.lossMargin, label: cfg.label}
	for _, a := range cfg.auth {
		r.auth += string(a.auth)
	}
	return r, nil
}

func TestParseDSN(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPassword, "")
	def := func(r dsnResult) dsnResult {
		if r.root == "" {
			r.root = DefaultRoot
		}
		if r.sessionTimeout == 0 {
			r.sessionTimeout = DefaultSessionTimeout
		}
		return r
	}
	for _, c := range []struct {
		dsn  string
		env  string // $ZKLOCK_PASSWORD
		want dsnResult
	}{
		// ZooKeeper's native connect string.
		{dsn: "127.0.0.1:2181", want: dsnResult{servers: []string{"127.0.0.1:2181"}}},
		{dsn: " 127.0.0.1:2181 \n", want: dsnResult{servers: []string{"127.0.0.1:2181"}}},
		{dsn: "h1:2181,h2:2181/app", want: dsnResult{servers: []string{"h1:2181", "h2:2181"}, root: "/app"}},
		{dsn: "h1,h2,h3/app/locks", want: dsnResult{servers: []string{"h1:2181", "h2:2181", "h3:2181"}, root: "/app/locks"}},
		{dsn: "h1:2181, h2:2182\t,h3", want: dsnResult{servers: []string{"h1:2181", "h2:2182", "h3:2181"}}},
		{dsn: "h1:2181/", want: dsnResult{servers: []string{"h1:2181"}}},
		{dsn: "h1:02181", want: dsnResult{servers: []string{"h1:2181"}}},
		{dsn: "zk-1.example.com.:2181,my_host", want: dsnResult{servers: []string{"zk-1.example.com.:2181", "my_host:2181"}}},
		{dsn: "h1/app?session_timeout=7s&label=w1&loss_margin=1500ms",
			want: dsnResult{servers: []string{"h1:2181"}, root: "/app", sessionTimeout: 7 * time.Second, lossMargin: 1500 * time.Millisecond, label: "w1"}},
		{dsn: "h1?label=a+b%21", want: dsnResult{servers: []string{"h1:2181"}, label: "a b!"}},
		{dsn: "h1/a%20b", want: dsnResult{servers: []string{"h1:2181"}, root: "/a%20b"}},
		// IPv6.
		{dsn: "[::1]:2181", want: dsnResult{servers: []string{"[::1]:2181"}}},
		{dsn: "[::1]", want: dsnResult{servers: []string{"[::1]:2181"}}},
		{dsn: "[2001:db8::7]:2888,[::1]/x", want: dsnResult{servers: []string{"[2001:db8::7]:2888", "[::1]:2181"}, root: "/x"}},
		{dsn: "[fe80::1%eth0]:2181", want: dsnResult{servers: []string{"[fe80::1%eth0]:2181"}}},
		// zk:// URLs.
		{dsn: "zk://h1:2181,h2/locks/app?session_timeout=7s&label=w1",
			want: dsnResult{servers: []string{"h1:2181", "h2:2181"}, root: "/locks/app", sessionTimeout: 7 * time.Second, label: "w1"}},
		{dsn: "ZK://h1", want: dsnResult{servers: []string{"h1:2181"}}},
		{dsn: "zk://h1/", want: dsnResult{servers: []string{"h1:2181"}}},
		{dsn: "zk://h1/a%20b%3Fc", want: dsnResult{servers: []string{"h1:2181"}, root: "/a b?c"}},
		{dsn: "zk://[::1]:2181/x", want: dsnResult{servers: []string{"[::1]:2181"}, root: "/x"}},
		// Digest authentication.
		{dsn: "zk://app:p%40ss%3Aw@h1/x", want: dsnResult{servers: []string{"h1:2181"}, root: "/x", auth: "app:p@ss:w"}},
		{dsn: "zk://app@h1?password_file=" + url.QueryEscape(secret), want: dsnResult{servers: []string{"h1:2181"}, auth: "app:s3cret"}},
		{dsn: "zk://app@h1", env: "from-env", want: dsnResult{servers: []string{"h1:2181"}, auth: "app:from-env"}},
		{dsn: "zk://app:url@h1", env: "from-env", want: dsnResult{servers: []string{"h1:2181"}, auth: "app:url"}},
		{dsn: "zk://h1", env: "from-env", want: dsnResult{servers: []string{"h1:2181"}}},
	} {
		t.Setenv(EnvPassword, c.env)
		got, err := parseForTest(t, c.dsn)
		if err != nil {
			t.Errorf("ParseDSN(%q): %v", c.dsn, err)
			continue
		}
		if want := def(c.want); !slices.Equal(got.servers, want.servers) || got.root != want.root || got.sessionTimeout != want.sessionTimeout ||
			got.lossMargin != want.lossMargin || got.label != want.label || got.auth != want.auth {
			t.Errorf("ParseDSN(%q) = %+v\nwant %+v", c.dsn, got, want)
		}
	}
}

func TestParseDSNErrors(t *testing.T) {
	dir := t.TempDir()
	big, empty := filepath.Join(dir, "big"), filepath.Join(dir, "empty")
	if err := os.WriteFile(big, make([]byte, 5000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPassword, "")
	cases := []struct{ dsn, want string }{
		{"", `connection string "": empty`},
		{"  ", `empty`},
		{"http://h1:2181", `unknown scheme "http://" (want zk://, or ZooKeeper's connect string h1:2181,h2:2181/root)`},
		{"zookeeper://h1", `unknown scheme "zookeeper://"`},
		{"zk://", `no host`},
		{"/app", `no host`},
		{"zk:///app", `no host`},
		// Empty parts.
		{"h1:2181,,h2:2181", `connection string "h1:2181,,h2:2181": host 2 of 3: empty host (two commas in a row, or a comma at an end)`},
		{"h1:2181,", `host 2 of 2: empty host`},
		{",h1", `host 1 of 2: empty host`},
		{",", `host 1 of 2: empty host`},
		{"h1, ,h2", `host 2 of 3: empty host`},
		// Ports.
		{"h1:abc", `connection string "h1:abc": port "abc" is not a number`},
		{"h1:2181,h2:x1", `connection string "h1:2181,h2:x1": host 2 of 2 ("h2:x1"): port "x1" is not a number`},
		{"h1:-1", `port "-1" is not a number`},
		{"h1:+1", `port "+1" is not a number`},
		{"h1:0", `connection string "h1:0": port 0 is out of range (1 to 65535)`},
		{"h1:65536", `port 65536 is out of range`},
		{"h1:99999999999999999999", `port 99999999999999999999 is out of range`},
		{"h1:", `connection string "h1:": empty port (omit the colon for port 2181)`},
		// Hosts.
		{":2181", `connection string ":2181": empty host name`},
		{"h1:2181,h1:2181", `host 2 of 2 ("h1:2181"): repeats host 1 (h1:2181)`},
		{"h1,H1:2181", `host 2 of 2 ("H1:2181"): repeats host 1 (h1:2181)`},
		{"[::1],[::1]:2181", `host 2 of 2 ("[::1]:2181"): repeats host 1 ([::1]:2181)`},
		{"h 1", `blank inside a host`},
		{"h1;h2", `invalid character ';'`},
		{"a..b", `empty label in host name "a..b"`},
		{".a", `empty label`},
		{"1.2.3.256", `"1.2.3.256" is not an IPv4 address`},
		{"user:pw@h1:2181", `connection string "user:xxxxx@h1:2181": user info ("user@") is only taken in the zk:// form: zk://user@HOSTS..., with the password in password_file, the URL or $ZKLOCK_PASSWORD`},
		{"zk://app:p@ss@h1", `user info: write "@" as %40`},
		// IPv6.
		{"::1", `connection string "::1": an IPv6 address must be in brackets, as [::1] or [::1]:2181 (a bare one is ambiguous: its last group could be a port)`},
		{"fe80::1:2181", `an IPv6 address must be in brackets, as [fe80::1:2181] or [fe80::1:2181]:2181, or [fe80::1]:2181 if 2181 is the port`},
		{"h1:2181;h2:2181", `too many colons (write host:port, with an IPv6 address in brackets: [::1]:2181)`},
		{"h1:2181 h2:2181", `connection string "h1:2181 h2:2181": blank inside a host (separate hosts with commas)`},
		{"[::1", `connection string "[::1": missing "]" after the IPv6 address`},
		{"[::1]x", `connection string "[::1]x": want [IPv6] or [IPv6]:port`},
		{"[::1]:", `empty port`},
		{"[::1]:0", `port 0 is out of range`},
		{"[127.0.0.1]:2181", `"127.0.0.1" is not an IPv6 address (brackets are for IPv6 only)`},
		{"[zz]", `"zz" is not an IPv6 address`},
		{"[]", `"" is not an IPv6 address`},
		{"[fe80::1%e#0]", `connection string "[fe80::1%e#0]": bad zone "e#0" (want an interface name, as in [fe80::1%eth0])`},
		// Roots.
		{"h1:2181/app/", `root "/app/": must not end with "/"`},
		{"h1/a//b", `root "/a//b": empty, "." or ".." path segment`},
		{"h1/a/../b", `root "/a/../b": empty, "." or ".." path segment`},
		{"h1/zookeeper/x", `root "/zookeeper/x": path is reserved by ZooKeeper`},
		{"h1/a\x01b", `root "/a\x01b": contains a character ZooKeeper forbids`},
		{"zk://h1/a%zz", `root "/a%zz": bad percent-encoding`},
		{"zk://h1/a%2F", `root "/a/": must not end with "/"`},
		{"zk://h1/a%20", `root "/a ": ends with a blank`},
		{"zk://h1#frag", `"#" must be written %23 in a zk:// URL`},
		// Parameters.
		{"zk://h1?bogus=1", `unknown parameter "bogus" (known: label, loss_margin, password_file, session_timeout)`},
		{"h1/app?bogus=1", `unknown parameter "bogus"`},
		{"zk://h1?session_timeout=x", `parameter session_timeout: bad duration "x": want a number with a unit, such as 250ms, 5s or 1m30s`},
		{"zk://h1?session_timeout=10", `parameter session_timeout: bad duration "10": missing unit, did you mean 10s?`},
		{"h1?session_timeout=10000", `parameter session_timeout: bad duration "10000": missing unit, did you mean 10000ms?`},
		{"h1?loss_margin=2sec", `parameter loss_margin: bad duration "2sec": unknown unit "sec", did you mean 2s?`},
		{"h1?session_timeout=50ms", `parameter session_timeout: session timeout 50ms is below 100ms`},
		{"h1?loss_margin=-1s", `parameter loss_margin: loss margin must be positive`},
		{"h1?session_timeout=1s&session_timeout=2s", `parameter session_timeout given 2 times`},
		{"h1?label=", `parameter label: empty value`},
		{"h1?label", `parameter label: empty value`},
		{"h1?%zz", `parameters: invalid URL escape "%zz"`},
		{"h1?a=1;b=2", `parameters: invalid semicolon separator in query`},
		{"zk://h1?user=u&password=p", `parameter "password": write the user in the URL, zk://USER@HOSTS`},
		{"zk://h1?user=u", `parameter "user": write the user in the URL`},
		// User info and passwords.
		{"zk://:pw@h1", `user info without a user name`},
		{"zk://app:@h1", `empty password after "app:" (drop the colon to take the password from password_file or $ZKLOCK_PASSWORD)`},
		{"zk://app@h1", `user "app" has no password: add ?password_file=FILE, set $ZKLOCK_PASSWORD, or write zk://app:PASSWORD@...`},
		{"zk://app:pw@h1?password_file=/x", `password given twice: in the URL and in password_file`},
		{"zk://h1?password_file=/x", `password_file without a user`},
		{"h1?password_file=/x", `password_file without a user`},
		{"zk://app@h1?password_file=/nonexistent/zk", `password_file: stat /nonexistent/zk: no such file or directory`},
		{"zk://app@h1?password_file=" + dir, `password_file: ` + dir + ` is not a regular file`},
		{"zk://app@h1?password_file=" + big, `password_file: ` + big + ` is larger than 4096 bytes`},
		{"zk://app@h1?password_file=" + empty, `password_file: ` + empty + ` is empty`},
		{"zk://a%zz@h1", `user: bad percent-encoding`},
		{"zk://app:p%zz@h1", `password: bad percent-encoding`},
	}
	for _, c := range cases {
		_, _, err := ParseDSN(c.dsn)
		if !errors.Is(err, ErrInvalidOption) {
			t.Errorf("ParseDSN(%q) = %v, want ErrInvalidOption", c.dsn, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDSN(%q):\n got %v\nwant it to contain %s", c.dsn, err, c.want)
		}
	}
}

// The password never shows in an error.
func TestParseDSNRedactsPassword(t *testing.T) {
	for _, dsn := range []string{
		"zk://app:s3cret@h1:abc",
		"zk://app:s3cret@h1?bogus=1",
		"zk://app:s3cret@h1,,h2",
		"zk://app:s3cret@h1?password_file=/x",
		"zk://app:s3cret@h1/a/",
		"zk://app:s3cret@h1#x",
		"zk://app:s3%zzcret@h1",
		"zk://app:s3cret@@h1",
		"app:s3cret@h1",
	} {
		_, _, err := ParseDSN(dsn)
		if err == nil || strings.Contains(err.Error(), "s3") {
			t.Errorf("ParseDSN(%q) = %v, want an error without the password", dsn, err)
		} else if !strings.Contains(err.Error(), "app:xxxxx@") {
			t.Errorf("ParseDSN(%q) = %v, want the password shown as xxxxx", dsn, err)
		}
	}
}

// Open takes ZooKeeper's native connect string: the chroot is the root,
// and a lock node lands under it; raw paths are under it too.
func TestIntegration_OpenNativeConnectString(t *testing.T) {
	chroot := zktest.UniqueRoot(t) + "/app"
	dsn := zktest.Shared().Addr() + chroot + "?session_timeout=4s&label=native"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open(%q): %v", dsn, err)
	}
	defer c.Close()
	if c.Root() != chroot {
		t.Errorf("Root() = %q, want %q", c.Root(), chroot)
	}
	l, err := c.Acquire(ctx, "orders/42")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.Path(), chroot+"/") {
		t.Errorf("lock node %s is not under the chroot %s", l.Path(), chroot)
	}
	data, _, err := c.Conn().Get(l.Path())
	if err != nil {
		t.Fatalf("the lock node %s is not in ZooKeeper: %v", l.Path(), err)
	}
	if !strings.Contains(string(data), `"label":"native"`) {
		t.Errorf("owner data %s lacks the label given in the string", data)
	}
	queues, _, err := c.Conn().Children(chroot)
	if err != nil || len(queues) != 1 {
		t.Errorf("children of the chroot: %v, %v; want the queue of orders/42", queues, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The path is the chroot of raw paths too, as for Curator and kazoo
	// connected with the same string.
	raw, err := c.Acquire(ctx, "/locks/job", RawPath())
	if err != nil {
		t.Fatal(err)
	}
	if want := chroot + "/locks/job/"; !strings.HasPrefix(raw.Path(), want) {
		t.Errorf("raw path lock node %s, want it under %s", raw.Path(), want)
	}
	if err := raw.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// A root given with WithRoot moves named resources only.
	plain, err := Connect(ctx, []string{zktest.Shared().Addr()}, WithRoot(chroot), WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if p, err := plain.QueuePath("/locks/job", RawPath()); err != nil || p != "/locks/job" {
		t.Errorf("QueuePath with WithRoot = %q, %v; want /locks/job", p, err)
	}
}

// FuzzParseDSN: ParseDSN never panics, its errors match ErrInvalidOption,
// and what it accepts comes back the same when its servers and root are
// written out again, in either form.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:2181", "h1:2181,h2:2181/app", "h1,h2,h3/app/locks?session_timeout=7s&label=w1",
		"[::1]:2181", "[::1]", "[fe80::1%eth0]:2181", "zk://h1:2181,h2/locks/app?session_timeout=7s",
		"zk://app:p%40ss@h1/x", "zk://h1/a%20b%3Fc", "h1:0", "::1", "h1,,h2", "h1,h1", "h1/a/", "zk://h1?bogus=1",
		"user:pw@h1", "zk://a@h1?password_file=/x", "h1?session_timeout=10", "Zk://A/0%20", "[::%#]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := dsn.Parse(s, dsn.Checks{Root: rootReason, Param: paramError})
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("ParseDSN(%q) = %v, not ErrInvalidOption", s, err)
			}
			return
		}
		if len(d.Servers) == 0 {
			t.Fatalf("ParseDSN(%q) accepted no server", s)
		}
		for _, srv := range d.Servers {
			if _, _, err := net.SplitHostPort(srv); err != nil {
				t.Fatalf("ParseDSN(%q) returned server %q: %v", s, srv, err)
			}
		}
		if got, err := dsn.CheckServers(d.Servers); err != nil || !slices.Equal(got, d.Servers) {
			t.Fatalf("ParseDSN(%q) returned %q, which Connect checks as %q, %v", s, d.Servers, got, err)
		}
		native := strings.Join(d.Servers, ",") + d.Root
		zkURL := "zk://" + strings.Join(d.Servers, ",") + (&url.URL{Path: d.Root}).EscapedPath()
		for _, again := range []string{native, zkURL} {
			if strings.Contains(d.Root, "?") && again == native {
				continue // a "?" starts the parameters; such a root needs the zk:// form
			}
			d2, err := dsn.Parse(again, dsn.Checks{Root: rootReason, Param: paramError})
			if err != nil {
				t.Fatalf("ParseDSN(%q) gave servers %q and root %q, but %q fails: %v", s, d.Servers, d.Root, again, err)
			}
			if !slices.Equal(d2.Servers, d.Servers) || d2.Root != d.Root {
				t.Fatalf("ParseDSN(%q) = %q %q, but %q gives %q %q", s, d.Servers, d.Root, again, d2.Servers, d2.Root)
			}
		}
	})
}
