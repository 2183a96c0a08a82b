package zklock_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklockkit/zklockkit/zklock"
	"github.com/zklockkit/zklockkit/zktest"
)

// ensureOpenParent creates /zktest with an open ACL, so that a test whose
// client creates its root with a restrictive ACL cannot lock other tests
// out of the shared parent.
func ensureOpenParent(t *testing.T) {
	t.Helper()
	c := newClient(t, "/zktest/open")
	_, err := c.Conn().Create("/zktest", nil, 0, zk.WorldACL(zk.PermAll))
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
}

func aclSet(acl []zk.ACL) []string {
	var s []string
	for _, a := range acl {
		s = append(s, a.Scheme+":"+a.ID+":"+string(rune('0'+a.Perms)))
	}
	slices.Sort(s)
	return s
}

// With digest credentials every node zklock creates (the root, the queue
// container, the lease node) is writable and deletable only by its owner
// and the admin; everyone else may read it. Another tenant can neither
// delete nor overwrite the lease node, nor queue on the resource, nor
// delete the queue; the admin can break the lock.
func TestIntegration_DigestACLLocksOutOtherTenants(t *testing.T) {
	ensureOpenParent(t)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	alice := newClient(t, root, zklock.WithDigestAuth("alice", "alice-secret"), zklock.WithAdminDigest("ops", "ops-secret"))
	l, err := alice.Acquire(ctx, "vault")
	if err != nil {
		t.Fatal(err)
	}
	queue, _ := alice.QueuePath("vault")
	want := aclSet(append(append(zk.DigestACL(zk.PermAll, "alice", "alice-secret"), zk.WorldACL(zk.PermRead)...),
		zk.DigestACL(zk.PermAll, "ops", "ops-secret")...))
	for _, p := range []string{root, queue, l.Path()} {
		acl, _, err := alice.Conn().GetACL(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := aclSet(acl); !slices.Equal(got, want) {
			t.Fatalf("ACL of %s = %v, want %v", p, got, want)
		}
	}

	for _, tc := range []struct {
		name string
		opts []zklock.Option
	}{
		{"other tenant", []zklock.Option{zklock.WithDigestAuth("mallory", "mallory-secret")}},
		{"wrong password", []zklock.Option{zklock.WithDigestAuth("alice", "guess")}},
		{"no credentials", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// ZooKeeper's digest scheme accepts any user:password at
			// authentication: a wrong password only shows when an ACL
			// check fails. Connect succeeds; every write is refused.
			other := newClient(t, root, tc.opts...)
			conn := other.Conn()
			if err := conn.Delete(l.Path(), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("delete of the lease node: %v, want zk.ErrNoAuth", err)
			}
			if _, err := conn.Set(l.Path(), []byte("stolen"), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("overwrite of the lease node: %v, want zk.ErrNoAuth", err)
			}
			if err := conn.Delete(queue, -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("delete of the queue: %v, want zk.ErrNoAuth", err)
			}
			if _, err := conn.SetACL(l.Path(), zk.WorldACL(zk.PermAll), -1); !errors.Is(err, zk.ErrNoAuth) {
				t.Fatalf("ACL change of the lease node: %v, want zk.ErrNoAuth", err)
			}
			for _, try := range []bool{false, true} {
				var opts []zklock.AcquireOption
				if try {
					opts = append(opts, zklock.Try())
				}
				actx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := other.Acquire(actx, "vault", opts...)
				cancel()
				if !errors.Is(err, zklock.ErrNoAuth) || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("acquire (try=%t): %v, want ErrNoAuth at once", try, err)
				}
				if msg := err.Error(); !strings.Contains(msg, `"vault"`) || !strings.Contains(msg, "not authorized") {
					t.Fatalf("unclear error: %q", msg)
				}
				t.Logf("acquire (try=%t): %v", try, err)
			}
			// Reading is allowed: the holder can be seen.
			q, err := other.Inspect(ctx, "vault")
			if err != nil || len(q.Holders()) != 1 || q.Holders()[0].Path != l.Path() {
				t.Fatalf("inspect: %+v %v", q, err)
			}
			if l.Err() != nil {
				t.Fatalf("alice's lease ended: %v", l.Err())
			}
			if got := other.Locks(); len(got) != 0 {
				t.Fatalf("refused acquires left local nodes: %+v", got)
			}
		})
	}

	// The admin identity may break the lock: alice hears of it at once.
	ops := newClient(t, root, zklock.WithAuth("digest", []byte("ops:ops-secret")))
	if err := ops.Conn().Delete(l.Path(), -1); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
	select {
	case <-l.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("lease not lost after the admin deleted its node")
	}
	var lost *zklock.LostError
	if !errors.As(l.Err(), &lost) || lost.Reason != zklock.LossNodeDeleted {
		t.Fatalf("lease err = %v, want node deleted", l.Err())
	}
	// And alice can take it again.
	l2, err := alice.Acquire(ctx, "vault")
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// WithAdminDigest appends to the ACL in effect: after WithACL too.
func TestIntegration_AdminDigestWithCustomACL(t *testing.T) {
	ensureOpenParent(t)
	root := zktest.UniqueRoot(t)
	ctx := testCtx(t)
	acl := zk.DigestACL(zk.PermAll, "svc", "pw")
	// the admin first: WithACL given later must not drop it
	c := newClient(t, root, zklock.WithAuth("digest", []byte("svc:pw")), zklock.WithAdminDigest("ops", "x"), zklock.WithACL(acl))
	l, err := c.Acquire(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	got, _, err := c.Conn().GetACL(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if want := aclSet(append(slices.Clone(acl), zk.DigestACL(zk.PermAll, "ops", "x")...)); !slices.Equal(aclSet(got), want) {
		t.Fatalf("ACL %v, want %v", aclSet(got), want)
	}
	if _, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithAdminDigest("", "x")); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("empty admin user: %v", err)
	}
}

// An authentication scheme the server does not know is refused at
// Connect, with ErrNoAuth.
func TestIntegration_UnknownAuthScheme(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := zklock.Connect(ctx, []string{zktest.Shared().Addr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithSessionTimeout(testSessionTimeout), zklock.WithAuth("kerberos-please", []byte("x")))
	if !errors.Is(err, zklock.ErrNoAuth) {
		t.Fatalf("err = %v, want ErrNoAuth", err)
	}
	t.Log(err)
}

// dialLog records every address a client dials.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	return net.DialTimeout(network, addr, timeout)
}

func (d *dialLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// Over WithTLS the client reaches ZooKeeper only on its secure port, with
// a verified handshake both ways (the server requires a client
// certificate), and locks work as usual. The secure port speaks nothing
// but TLS, and a client that does not trust the server's CA, or has no
// certificate, is refused with an error saying why.
func TestIntegration_TLS(t *testing.T) {
	srv, err := zktest.StartTLSServer(zktest.WithTickTime(500 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := testCtx(t)
	base := srv.ClientTLSConfig()
	var mu sync.Mutex
	var verified []string
	base.VerifyConnection = func(cs tls.ConnectionState) error {
		mu.Lock()
		defer mu.Unlock()
		if len(cs.VerifiedChains) == 0 {
			return errors.New("unverified chain")
		}
		verified = append(verified, cs.PeerCertificates[0].Subject.CommonName)
		return nil
	}
	dials := &dialLog{}
	c, err := zklock.Connect(ctx, []string{srv.SecureAddr()}, zklock.WithRoot(zktest.UniqueRoot(t)),
		zklock.WithSessionTimeout(testSessionTimeout), zklock.WithDialer(dials.dial), zklock.WithTLS(base))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(ctx, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if l.Token() == 0 {
		t.Fatal("no fencing token")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	hs := slices.Clone(verified)
	mu.Unlock()
	if len(hs) == 0 || hs[0] != "zktest server" {
		t.Fatalf("verified handshakes: %v", hs)
	}
	for _, a := range dials.all() {
		if a != srv.SecureAddr() {
			t.Fatalf("dialed %s; only the secure port %s should be used (plain port %s)", a, srv.SecureAddr(), srv.Addr())
		}
	}
	refused := func(name string, opts ...zklock.Option) error {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err := zklock.Connect(cctx, []string{srv.SecureAddr()}, append([]zklock.Option{zklock.WithSessionTimeout(testSessionTimeout)}, opts...)...)
		if !errors.Is(err, zklock.ErrUnavailable) {
			t.Fatalf("%s: err = %v, want ErrUnavailable", name, err)
		}
		t.Logf("%s: %v", name, err)
		return err
	}
	refused("plaintext to the secure port")
	untrusted := srv.ClientTLSConfig()
	untrusted.RootCAs = x509.NewCertPool() // trusts nothing
	if err := refused("untrusted server", zklock.WithTLS(untrusted)); !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("error does not say why: %v", err)
	}
	noCert := srv.ClientTLSConfig()
	noCert.Certificates = nil
	refused("no client certificate", zklock.WithTLS(noCert))
	wrongName := srv.ClientTLSConfig()
	wrongName.ServerName = "zk.example.com"
	if err := refused("wrong server name", zklock.WithTLS(wrongName)); !strings.Contains(err.Error(), "zk.example.com") {
		t.Fatalf("error does not say why: %v", err)
	}
	if _, err := zklock.Connect(ctx, []string{srv.SecureAddr()}, zklock.WithTLS(nil)); !errors.Is(err, zklock.ErrInvalidOption) {
		t.Fatalf("nil TLS config: %v", err)
	}
}
