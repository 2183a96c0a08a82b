package zklock

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// WithAdminDigest adds an administrator to the ACL of every node the client
// creates: the digest identity user:password gets every permission, so an
// operator authenticated as it (e.g. with the zklock CLI) can delete a lock
// node or a queue of another tenant to break a stuck lock. The client does
// not authenticate as the administrator itself.
//
// It adds to whatever ACL WithDigestAuth, WithACL or the default sets, in
// any order of options:
//
//	zklock.Connect(ctx, servers,
//		zklock.WithDigestAuth("billing", billingPassword),
//		zklock.WithAdminDigest("ops", opsPassword))
//
// With the default ACL (world: all) it changes nothing anybody can do.
func WithAdminDigest(user, password string) Option {
	return func(c *clientConfig) {
		if user == "" {
			c.setErr(fmt.Errorf("%w: empty admin user", ErrInvalidOption))
			return
		}
		c.adminACL = append(c.adminACL, zk.DigestACL(zk.PermAll, user, password)...)
	}
}
