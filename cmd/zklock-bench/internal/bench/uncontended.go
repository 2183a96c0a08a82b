package bench

import "context"

// Uncontended runs n acquire+release cycles of one lock on one session of
// side, one after another. Latencies are whole cycles. The queue znode
// exists beforehand, as it does in steady use.
func Uncontended(ctx context.Context, h *Harness, side Side, n int) (Sample, error) {
	h.stopTimer()
	defer h.startTimer()
	root := h.newRoot("uncontended")
	defer h.cleanup(root)
	const res = "u"
	if err := side.prepare(h, root, []string{res}); err != nil {
		return Sample{}, err
	}
	s, err := side.open(ctx, h, root)
	if err != nil {
		return Sample{}, err
	}
	defer s.close()
	return h.serially(ctx, n, func() error {
		unlock, err := s.lock(ctx, res)
		if err != nil {
			return err
		}
		return unlock(ctx)
	})
}
