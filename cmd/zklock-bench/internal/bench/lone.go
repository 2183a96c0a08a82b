package bench

import "context"

// LoneRequest runs n requests, one at a time, on one session of side: an
// exists of the run's root, with nothing else in flight on the session.
// zklock's go through its client's connection (Client.Conn), which passes
// through zklock's own layer under go-zookeeper; zk.Lock's through
// go-zookeeper's plain connection. Latencies are round trips: a layer that
// holds a write back to join it with others delays each of them.
func LoneRequest(ctx context.Context, h *Harness, side Side, n int) (Sample, error) {
	root, s, end, err := h.sessionRun(ctx, side, "lone")
	if err != nil {
		return Sample{}, err
	}
	defer end()
	conn := s.conn()
	return h.serially(ctx, n, func() error {
		if _, _, err := conn.Exists(root); err != nil {
			return err
		}
		return ctx.Err() // go-zookeeper's calls take no context
	})
}
