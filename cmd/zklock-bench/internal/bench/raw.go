package bench

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"
)

// RawCreateDelete measures the server's ceiling for a lock cycle: n pairs
// of Create (EPHEMERAL_SEQUENTIAL) and Delete of the created node, on one
// fresh session, from width goroutines (1: serially). Latencies are whole
// pairs.
func RawCreateDelete(ctx context.Context, h *Harness, n, width int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("raw")
	defer h.cleanup(root)
	if err := mkdirs(h.admin, root, false); err != nil {
		return Sample{}, err
	}
	conn, err := dial(ctx, h.sessionServers(root), h.timeout)
	if err != nil {
		return Sample{}, err
	}
	defer conn.Close()
	width = max(1, min(width, n))
	lat := make([]time.Duration, n)
	sp, err := h.begin(ctx)
	if err != nil {
		return Sample{}, err
	}
	err = parallel(n, width, func(i int) error {
		t := time.Now()
		p, err := conn.Create(root+"/lock-", nil, zk.FlagEphemeralSequential, openACL)
		if err == nil {
			err = conn.Delete(p, -1)
		}
		lat[i] = time.Since(t)
		return err
	})
	m := sp.end()
	if err != nil {
		return Sample{}, err
	}
	return m.sample(n, lat), nil
}
