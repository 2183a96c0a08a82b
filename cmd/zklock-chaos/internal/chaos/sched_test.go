package chaos

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Goroutines kept from running show in the watch: with one P, goroutines
// made runnable by one that then spins wait until the spinner is
// preempted (about 10 ms). The runtime times one scheduling in 8: make 64.
func TestSchedWatchSeesAWaitToRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := newSchedWatch()
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 64 {
			wg.Go(func() {}) // runnable while their parent holds the only P
		}
		end := time.Now().Add(50 * time.Millisecond)
		for time.Now().Before(end) {
		}
	})
	wg.Wait()
	if d := w.longest(); d < 4*time.Millisecond {
		t.Fatalf("longest wait to run %v; want about 10 ms", d)
	}
}
