package bench

import "testing"

// Ping-pong's CPU is the hand-offs' alone: less than the whole run's,
// which includes the harness asking the servers, between hand-offs,
// whether the other side waits.
func TestIntegration_PingPongCPU(t *testing.T) {
	ctx, h := testHarness(t)
	for _, side := range Sides() {
		before := processCPU()
		s, err := PingPong(ctx, h, side, 20)
		if err != nil {
			t.Fatal(err)
		}
		whole := processCPU() - before
		if s.CPU <= 0 || s.CPU >= whole {
			t.Errorf("%s: %v of CPU in the hand-offs, %v in the whole run", side.Name(), s.CPU, whole)
		}
	}
}
