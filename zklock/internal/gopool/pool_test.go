package gopool_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/zklock/internal/gopool"
)

// Work handed to a pool with a goroutine parked runs on that goroutine:
// 100 calls one after another run on a handful of goroutines (one, but
// for a call that comes between a goroutine's work and its park), not on
// 100.
func TestGoReusesAParkedGoroutine(t *testing.T) {
	p := gopool.New(2)
	defer p.Close()
	seen := map[uint64]bool{}
	for range 100 {
		seen[run(p)] = true
		waitIdle(t, p, 1)
	}
	if len(seen) > 5 {
		t.Fatalf("100 calls ran on %d goroutines", len(seen))
	}
}

// Work never waits for a goroutine: with every pooled one busy, Go starts
// one more, and no more than maxIdle stay parked after.
func TestGoNeverWaitsAndKeepsAtMostMaxIdle(t *testing.T) {
	p := gopool.New(2)
	defer p.Close()
	release := make(chan struct{})
	var started sync.WaitGroup
	for range 10 {
		started.Add(1)
		p.Go(func() { started.Done(); <-release })
	}
	started.Wait() // all ten ran at once: none waited for another
	close(release)
	waitIdle(t, p, 2)
	time.Sleep(20 * time.Millisecond)
	if n := p.Idle(); n != 2 {
		t.Fatalf("%d parked, want 2", n)
	}
}

// Close ends the parked goroutines; Go still runs work after it.
func TestCloseEndsParkedGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	p := gopool.New(4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		p.Go(wg.Done)
	}
	wg.Wait()
	p.Close()
	p.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before || p.Idle() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close (before %d), %d parked", runtime.NumGoroutine(), before, p.Idle())
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	p.Go(func() { close(done) })
	<-done
}

// A nil Pool and the zero Pool start a goroutine per call.
func TestNilAndZeroPoolStartAGoroutine(t *testing.T) {
	for _, p := range []*gopool.Pool{nil, {}} {
		done := make(chan struct{})
		p.Go(func() { close(done) })
		<-done
		if p.Idle() != 0 {
			t.Fatalf("%v: %d parked", p, p.Idle())
		}
		p.Close()
	}
}

func run(p *gopool.Pool) uint64 {
	ch := make(chan uint64)
	p.Go(func() { ch <- goid() })
	return <-ch
}

func waitIdle(t *testing.T, p *gopool.Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.Idle() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d parked, want %d", p.Idle(), n)
		}
		runtime.Gosched()
	}
}

// goid reads the running goroutine's id from its stack trace.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id uint64
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
