package keycache

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Each key's value is made once, whatever the number of concurrent
// callers, and every caller gets it.
func TestGetMakesOncePerKey(t *testing.T) {
	var c Map[*int]
	var made atomic.Int32
	var wg sync.WaitGroup
	got := make([][]*int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				got[g] = append(got[g], c.Get(strconv.Itoa(k), func(string) *int { made.Add(1); return new(int) }))
			}
		}()
	}
	wg.Wait()
	if made.Load() != 50 {
		t.Fatalf("made %d values for 50 keys", made.Load())
	}
	for g := range got {
		for k := range got[g] {
			if got[g][k] != got[0][k] {
				t.Fatalf("key %d: caller %d got another value", k, g)
			}
		}
	}
}

// A lookup of a known key makes no allocation.
func TestGetKnownKeyAllocates(t *testing.T) {
	var c Map[int]
	c.Get("a/b", func(string) int { return 1 })
	key := []byte("a/b")
	if n := testing.AllocsPerRun(100, func() { _ = c.Get(string(key), nil) }); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
}
