package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

var openACL = zk.WorldACL(zk.PermAll)

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// dial opens a go-zookeeper session and waits until it is established.
func dial(ctx context.Context, servers []string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, errors.New("bench: connection closed before a session was established")
			}
			if ev.State == zk.StateHasSession {
				// The event channel drops events when full: nobody needs
				// to read it any more.
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("bench: connecting to %v: %w", servers, ctx.Err())
		}
	}
}

// mkdirs creates p and its ancestors as persistent nodes; with container,
// p itself is a CONTAINER node.
func mkdirs(conn *zk.Conn, p string, container bool) error {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for i, part := range parts {
		cur += "/" + part
		var err error
		if container && i == len(parts)-1 {
			_, err = conn.CreateContainer(cur, nil, zk.FlagContainer, openACL)
		} else {
			_, err = conn.Create(cur, nil, 0, openACL)
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("bench: create %s: %w", cur, err)
		}
	}
	return nil
}

// parallel runs f(i) for i in [0, n) on at most width goroutines and
// returns the first error.
func parallel(n, width int, f func(i int) error) error {
	if width > n {
		width = n
	}
	next := make(chan int)
	errs := make(chan error, width)
	for range width {
		go func() {
			var first error
			for i := range next {
				if err := f(i); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	var first error
	for range width {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// removeTree deletes p and everything under it. Nodes that vanish meanwhile
// (ephemeral nodes of closed sessions, emptied containers) are fine.
func removeTree(conn *zk.Conn, p string) error {
	kids, _, err := conn.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := parallel(len(kids), 64, func(i int) error {
		return removeTree(conn, path.Join(p, kids[i]))
	}); err != nil {
		return err
	}
	err = conn.Delete(p, -1)
	if err == nil || errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return fmt.Errorf("bench: delete %s: %w", p, err)
}

// fourLetter sends a ZooKeeper four-letter word and returns the answer.
func fourLetter(addr, cmd string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}

// mntr asks a server for its monitoring figures (the four-letter word
// mntr); it fails when the server does not allow it.
func mntr(addr string) (map[string]int64, error) {
	b, err := fourLetter(addr, "mntr")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(b, "\n") {
		k, v, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	if _, ok := out["zk_znode_count"]; !ok {
		return nil, fmt.Errorf("bench: %s answered mntr without zk_znode_count: %q", addr, b)
	}
	return out, nil
}

// serverVersion asks a server for its version (srvr), "" if it will not say.
func serverVersion(addr string) string {
	b, err := fourLetter(addr, "srvr")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(b, "\n") {
		if v, ok := strings.CutPrefix(line, "Zookeeper version: "); ok {
			v, _, _ = strings.Cut(v, ",")
			v, _, _ = strings.Cut(v, "-$") // an unexpanded build placeholder
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// group runs f(ctx, i) for i in [0, n) on n goroutines and returns the
// first error. The first failure cancels the others' context and calls
// onFail (if not nil), which should close the sessions in use: zk.Lock
// takes no context and returns only when its connection closes.
func group(ctx context.Context, n int, onFail func(), f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	errs := make(chan error, n)
	for i := range n {
		go func() {
			err := f(ctx, i)
			if err != nil {
				once.Do(func() {
					cancel()
					if onFail != nil {
						onFail()
					}
				})
			}
			errs <- err
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && (first == nil || errClosed(first)) {
			first = err
		}
	}
	return first
}
