package bench

import "context"

// Uncontended runs n acquire+release cycles of one lock on one session of
// side, one after another. Latencies are whole cycles. The queue znode
// exists beforehand, as it does in steady use.
func Uncontended(ctx context.Context, h *Harness, side Side, n int) (Sample, error) {
	const res = "u"
	_, s, end, err := h.sessionRun(ctx, side, "uncontended", res)
	if err != nil {
		return Sample{}, err
	}
	defer end()
	return h.serially(ctx, n, func() error {
		unlock, err := s.lock(ctx, res)
		if err != nil {
			return err
		}
		return unlock(ctx)
	})
}
