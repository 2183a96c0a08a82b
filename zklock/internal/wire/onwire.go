package wire

import "sync"

// onWire tells when a create request is on the wire. A request queued on
// the session after that is answered after the create (the server answers
// a session in order), which is how createAndList pipelines its listing
// behind the create. It is a tap subscriber (see Tracker).
type onWire struct {
	mu      sync.Mutex
	waiting map[string]chan struct{} // by the path the create asks for
}

var _ tapSubscriber = (*onWire)(nil)

// notify returns a channel closed once a create request for path has been
// written to the connection; stop forgets it.
func (w *onWire) notify(path string) (written <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.waiting == nil {
		w.waiting = make(map[string]chan struct{})
	}
	w.waiting[path] = ch
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		if w.waiting[path] == ch {
			delete(w.waiting, path)
		}
		w.mu.Unlock()
	}
}

func (w *onWire) requestSent(e requestSent) {
	if e.createPath == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.waiting[e.createPath]; ok {
		delete(w.waiting, e.createPath)
		close(ch)
	}
}

func (w *onWire) connected(connected) {}
func (w *onWire) replyRead(replyRead) {}
