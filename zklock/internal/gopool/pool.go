package gopool

import (
	"sync"
	"sync/atomic"
)

// Pool runs functions on goroutines it keeps for reuse (see the package
// doc). The zero Pool keeps none: Go then starts a goroutine per call. A
// nil *Pool does the same.
type Pool struct {
	max  int32
	work chan func() // unbuffered: a send succeeds only to a parked goroutine
	quit chan struct{}
	once sync.Once
	idle atomic.Int32 // goroutines parked or about to park
}

// New returns a Pool that keeps up to maxIdle goroutines parked.
func New(maxIdle int) *Pool {
	return &Pool{max: int32(maxIdle), work: make(chan func()), quit: make(chan struct{})}
}

// Go runs fn on a parked goroutine of the pool if there is one, on a new
// goroutine otherwise. It never blocks.
func (p *Pool) Go(fn func()) {
	if p == nil || p.work == nil {
		go fn()
		return
	}
	select {
	case p.work <- fn:
	default:
		go p.worker(fn)
	}
}

// worker runs fn, then parks for more work while the pool has room and
// is open.
func (p *Pool) worker(fn func()) {
	for {
		fn()
		fn = nil // let it go while parked
		if p.idle.Add(1) > p.max {
			p.idle.Add(-1)
			return
		}
		select {
		case fn = <-p.work:
			p.idle.Add(-1)
		case <-p.quit:
			p.idle.Add(-1)
			return
		}
	}
}

// Close ends the parked goroutines, and those that finish their work
// from now on. Go still runs what it is given, each on a goroutine of its
// own. Close may be called more than once.
func (p *Pool) Close() {
	if p == nil || p.quit == nil {
		return
	}
	p.once.Do(func() { close(p.quit) })
}

// Idle reports how many goroutines are parked or about to park.
func (p *Pool) Idle() int {
	if p == nil {
		return 0
	}
	return int(p.idle.Load())
}
