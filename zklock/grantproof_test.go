package zklock

import (
	"context"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// A lease is granted only on a proof of life worth having: a client
// whose last proof is old (here, its session's establishment, a quarter
// of the session timeout ago, with no lock node since, so no sync) proves
// its session afresh before it grants, so that the lease starts with at
// least half of a fresh proof's window (a fifth of the session timeout
// with the default margin) before the client could give it up. Granted
// on the old proof, the lease would have had less than a sixth (a create
// asks the prover for a sync only when less than a tenth is left).
func TestIntegration_GrantCarriesAProofWorthHaving(t *testing.T) {
	const timeout = 4 * time.Second
	c, err := Connect(context.Background(), []string{zktest.Shared().Addr()},
		WithRoot(zktest.UniqueRoot(t)), WithSessionTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(timeout / 4)
	before := time.Until(c.sess.LossDeadline())
	l, err := c.Acquire(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	left := time.Until(c.sess.LossDeadline())
	if left < timeout/5 {
		t.Fatalf("granted with %v of proven life left (%v before the acquire); want at least %v", left, before, timeout/5)
	}
	t.Logf("proven life left: %v before the acquire, %v once granted", before, left)
}
