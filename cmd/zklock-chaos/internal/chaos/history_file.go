package chaos

import (
	"os"
	"sync"
	"time"
)

// historyFile writes the history's lines to its file from a goroutine of
// its own, in the order they were added. The hub adds a line under its
// lock, which every worker's report waits for; a write to the file may
// wait on the disk (three ZooKeeper servers and a database write to the
// same one), and must not hold the hub up meanwhile.
type historyFile struct {
	f    *os.File
	wake chan struct{}
	done chan struct{}

	mu             sync.Mutex
	wrote          *sync.Cond // written grew
	buf            []byte     // added, not yet written
	added, written int64      // bytes
	closed         bool
	err            error
	slowest        time.Duration // the longest write
}

func newHistoryFile(f *os.File) *historyFile {
	w := &historyFile{f: f, wake: make(chan struct{}, 1), done: make(chan struct{})}
	w.wrote = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// add queues line for the file.
func (w *historyFile) add(line []byte) {
	w.mu.Lock()
	w.buf = append(w.buf, line...)
	w.added += int64(len(line))
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *historyFile) run() {
	defer close(w.done)
	var out []byte
	for {
		<-w.wake
		w.mu.Lock()
		out, w.buf = w.buf, out[:0]
		closed := w.closed
		w.mu.Unlock()
		if len(out) > 0 {
			began := time.Now()
			_, err := w.f.Write(out)
			took := time.Since(began)
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.slowest = max(w.slowest, took)
			w.written += int64(len(out))
			w.wrote.Broadcast()
			w.mu.Unlock()
		}
		if closed {
			return
		}
	}
}

// Sync waits until every line added so far is written; it returns the
// first error met.
func (w *historyFile) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.written < w.added && w.err == nil && !w.closed {
		w.wrote.Wait()
	}
	return w.err
}

// Slowest returns the longest a write to the file took so far.
func (w *historyFile) Slowest() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.slowest
}

// Close writes what is queued and closes the file; it returns the first
// error met.
func (w *historyFile) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	// A line added after the last swap but before closed was read is in
	// buf still.
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.f.Write(w.buf)
		w.buf = nil
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}
