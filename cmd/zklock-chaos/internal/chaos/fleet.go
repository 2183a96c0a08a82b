package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/zklockkit/zklockkit/zktest"
)

// fleet runs the worker processes. Each slot has one proxy per ensemble
// member, and its worker connects only through them, so blackholing a
// slot's proxies cuts that worker off from every server at once. A killed
// worker is replaced in its slot by a new process (a new Proc).
type fleet struct {
	exe   string
	dir   string
	base  workerSpec
	hub   *hub
	slots []*slot

	mu       sync.Mutex
	nextProc int
	stopping bool
}

type slot struct {
	idx     int
	proxies []*zktest.Proxy

	mu  sync.Mutex
	cur *proc
}

type proc struct {
	id, slot int
	cmd      *exec.Cmd
	done     chan struct{} // closed once reaped
	mu       sync.Mutex
	expected bool // its death was caused on purpose (kill, stop)
}

func newFleet(exe, dir string, base workerSpec, h *hub, servers []string, n int) (*fleet, error) {
	f := &fleet{exe: exe, dir: dir, base: base, hub: h}
	for i := range n {
		s := &slot{idx: i + 1}
		for _, addr := range servers {
			p, err := zktest.NewProxy(addr)
			if err != nil {
				return nil, errors.Join(err, f.closeProxies())
			}
			s.proxies = append(s.proxies, p)
		}
		f.slots = append(f.slots, s)
	}
	return f, nil
}

// start launches a worker in every slot.
func (f *fleet) start() error {
	for _, s := range f.slots {
		if err := f.spawn(s); err != nil {
			return err
		}
	}
	return nil
}

// spawn starts a new worker process in slot s.
func (f *fleet) spawn(s *slot) error {
	f.mu.Lock()
	if f.stopping {
		f.mu.Unlock()
		return nil
	}
	f.nextProc++
	id := f.nextProc
	f.mu.Unlock()
	spec := f.base
	spec.Proc, spec.Slot = id, s.idx
	spec.Load = f.hub.loadShare()
	spec.Servers = nil
	for _, p := range s.proxies {
		spec.Servers = append(spec.Servers, p.Addr())
	}
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(f.exe)
	cmd.Env = append(os.Environ(), workerEnv+"="+string(raw))
	logf, err := os.Create(filepath.Join(f.dir, fmt.Sprintf("worker-%03d.log", id)))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("chaos: starting worker: %w", err)
	}
	p := &proc{id: id, slot: s.idx, cmd: cmd, done: make(chan struct{})}
	s.mu.Lock()
	s.cur = p
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		expected := p.expected
		p.mu.Unlock()
		if !expected {
			detail := "exited"
			if err != nil {
				detail = "exited: " + err.Error()
			}
			f.hub.record(Event{Kind: EvDied, Proc: id, Slot: s.idx, PID: cmd.Process.Pid, Outcome: "crash", Detail: detail})
		}
		close(p.done)
	}()
	return nil
}

// startLoad tells every live worker that has started to fetch its share
// of the load phase (SIGUSR2); workers started later get it in their spec.
func (f *fleet) startLoad() {
	for _, s := range f.slots {
		if p := s.current(); p != nil && p.alive() && f.hub.hasStarted(p.id) {
			_ = p.signal(syscall.SIGUSR2)
		}
	}
}

// current returns the live process of a slot.
func (s *slot) current() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (p *proc) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return fmt.Errorf("chaos: worker %d has exited", p.id)
	default:
	}
	return p.cmd.Process.Signal(sig)
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL, records the death at the moment of the signal, and
// waits for the process to be reaped.
func (f *fleet) kill(p *proc) {
	p.mu.Lock()
	p.expected = true
	p.mu.Unlock()
	at := time.Now().UnixNano()
	if err := p.signal(syscall.SIGKILL); err == nil {
		f.hub.record(Event{Kind: EvDied, T: at, Proc: p.id, Slot: p.slot, PID: p.cmd.Process.Pid, Outcome: "killed", Detail: "SIGKILL"})
	}
	<-p.done
}

// slotOf returns the slot whose current process is procID, or nil.
func (f *fleet) slotOf(procID int) *slot {
	for _, s := range f.slots {
		if p := s.current(); p != nil && p.id == procID {
			return s
		}
	}
	return nil
}

// quiesce asks every worker to stop acquiring (SIGUSR1) and waits until
// each has reported quiesced or timeout passes. It returns the processes
// that did not. A worker respawned a moment ago is signalled only once it
// has reported start: before its handler is set, SIGUSR1 would kill it.
func (f *fleet) quiesce(timeout time.Duration) []int {
	signalled := map[int]bool{}
	deadline := time.Now().Add(timeout)
	for {
		q := f.hub.quiesced()
		var missing []int
		for _, s := range f.slots {
			p := s.current()
			if p == nil || !p.alive() {
				continue
			}
			if !signalled[p.id] {
				_ = p.signal(syscall.SIGCONT) // a paused worker must run to stop
				if f.hub.hasStarted(p.id) {
					_ = p.signal(syscall.SIGUSR1)
					signalled[p.id] = true
				}
			}
			if _, ok := q[p.id]; !ok {
				missing = append(missing, p.id)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends every worker: SIGTERM (the worker closes its client), then
// SIGKILL after timeout.
func (f *fleet) stop(timeout time.Duration) {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
	var ps []*proc
	for _, s := range f.slots {
		if p := s.current(); p != nil && p.alive() {
			p.mu.Lock()
			p.expected = true
			p.mu.Unlock()
			_ = p.signal(syscall.SIGCONT)
			_ = p.signal(syscall.SIGTERM)
			ps = append(ps, p)
		}
	}
	deadline := time.After(timeout)
	for _, p := range ps {
		select {
		case <-p.done:
		case <-deadline:
			_ = p.signal(syscall.SIGKILL)
			<-p.done
		}
	}
}

// heal undoes every proxy fault.
func (f *fleet) heal() {
	for _, s := range f.slots {
		for _, p := range s.proxies {
			p.Blackhole(false)
			p.RejectNew(false)
			p.SetDelay(0)
		}
	}
}

func (f *fleet) closeProxies() error {
	var err error
	for _, s := range f.slots {
		for _, p := range s.proxies {
			err = errors.Join(err, p.Close())
		}
	}
	return err
}
