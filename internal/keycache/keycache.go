// Package keycache is a map from string keys to values made once per
// key, for what the adapters look up on every request or call and learn
// once (a route pattern's parameters, a gRPC method's configuration).
//
// Reads take no lock and make no allocation: the map is replaced whole
// on a write, which happens once per key. A lookup's key does not escape,
// so a caller may pass a string that lives on its stack.
package keycache

import (
	"maps"
	"strings"
	"sync"
	"sync/atomic"
)

// Map maps keys to values made by the function given to Get. Its zero
// value is an empty map. It is safe for concurrent use.
type Map[V any] struct {
	mu sync.Mutex // serialises writes
	m  atomic.Pointer[map[string]V]
}

// Get returns the value of key, made by newValue (with a copy of key,
// which newValue may keep) the first time. newValue runs with the Map's
// write lock held, once per key.
func (c *Map[V]) Get(key string, newValue func(key string) V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[key]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[key]; ok {
			return v
		}
	}
	k := strings.Clone(key)
	v := newValue(k)
	m := map[string]V{}
	if old != nil {
		m = maps.Clone(*old)
	}
	m[k] = v
	c.m.Store(&m)
	return v
}
