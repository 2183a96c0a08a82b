package chaos

import "testing"

// The fenced register: writers are fenced by every token, readers by
// writers' tokens only, semaphore holders not at all.
func TestFence(t *testing.T) {
	s := newMemStore()
	for i, c := range []struct {
		res, mode string
		tok       int64
		ok        bool
		prev      int64
	}{
		{"a", ModeExclusive, 10, true, 0},
		{"a", ModeExclusive, 10, true, 10},  // the same holder again
		{"a", ModeExclusive, 9, false, 10},  // an earlier holder: fenced off
		{"a", ModeRead, 12, true, 10},       // a reader after the writer
		{"a", ModeRead, 11, true, 12},       // readers interleave
		{"a", ModeExclusive, 11, false, 12}, // a writer behind whom a reader wrote
		{"a", ModeExclusive, 13, true, 12},
		{"a", ModeRead, 12, false, 13}, // a reader ahead of that writer
		{"b", ModeSemaphore, 5, true, 0},
		{"b", ModeSemaphore, 3, true, 5},
		{"b", ModeExclusive, 4, false, 5},
	} {
		ok, prev := s.Write(c.res, c.mode, c.tok)
		if ok != c.ok || prev != c.prev {
			t.Fatalf("write %d (%s %s %d): %t, prev %d; want %t, %d", i, c.res, c.mode, c.tok, ok, prev, c.ok, c.prev)
		}
	}
}
