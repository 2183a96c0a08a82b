package chaos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Lines added from many goroutines reach the file whole, in the order they
// were added, all of them once Close returns.
func TestHistoryFileKeepsOrder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "h.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := newHistoryFile(f)
	var mu sync.Mutex // the hub's lock: it orders the adds
	var want bytes.Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				line := fmt.Appendf(nil, "{\"g\":%d,\"i\":%d}\n", g, i)
				mu.Lock()
				want.Write(line)
				w.add(line)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("file has %d bytes, want %d in the order added", len(got), want.Len())
	}
}
