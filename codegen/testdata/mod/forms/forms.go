// Package forms is a zklockgen test case: every placeholder formatting
// rule, field paths, quoting and escapes, parameter and import renaming,
// value receivers, unexported types and package-level functions. Its test
// checks the resource names the generated code computes.
package forms

//go:generate go tool zklockgen

import (
	"context"
	"strings"
	"sync"

	o "example.com/zkgen/other"

	"github.com/zklockkit/zklockkit/zklock"
)

// time and other are declared here, so the generated file must import
// packages time and other under other names.
var time = "noon"

const other = 1

// ID is a named string type.
type ID string

// Num is a named integer type without a String method.
type Num int32

// Status is an integer type with a String method: the String method wins.
type Status int

// StatusActive is a Status.
const StatusActive Status = 1

func (s Status) String() string {
	if s == StatusActive {
		return "active"
	}
	return "inactive"
}

// Key has a String method on its pointer type only.
type Key struct{ A, B string }

func (k *Key) String() string { return k.A + ":" + k.B }

// Region is a named string type reached through fields.
type Region string

// Customer is reached through a pointer.
type Customer struct {
	Name   string
	Region Region
}

// Meta is embedded in Order: its fields are promoted.
type Meta struct{ Tenant string }

// Order is a placeholder root with nested, pointer and promoted fields.
type Order struct {
	ID       ID
	Customer *Customer
	Meta
}

// Store records, for every call, the resource the lease it ran under
// holds.
type Store struct {
	mu   sync.Mutex
	seen []string
}

// Seen returns the recorded resources, in call order.
func (s *Store) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func (s *Store) record(ctx context.Context) {
	r := "<no lease>"
	if l := zklock.LeaseFromContext(ctx); l != nil {
		r = l.Resource() + " " + l.Mode().String()
	}
	s.mu.Lock()
	s.seen = append(s.seen, r)
	s.mu.Unlock()
}

// Ints formats every integer kind in decimal.
//
//zklock:resource=n/{n}/{i64}/{u}/{u64}/{b}/{num}/{i8}
func (s *Store) Ints(ctx context.Context, n int, i64 int64, u uint, u64 uint64, b byte, num Num, i8 int8) error {
	s.record(ctx)
	return nil
}

// Strings formats a named string, a Stringer and a pointer-receiver
// Stringer.
//
//zklock:resource=s/{id}/{st}/{k}
func (s *Store) Strings(ctx context.Context, id ID, st Status, k Key) error {
	s.record(ctx)
	return nil
}

// Fields follows a pointer, nested fields and a promoted field.
//
//zklock:resource=o/{ord.ID}/{ord.Customer.Name}/{ord.Customer.Region}/{ord.Tenant} mode=write
func (s *Store) Fields(ctx context.Context, ord *Order) error {
	s.record(ctx)
	return nil
}

// Quoted has a template with a space, and literal braces.
//
//zklock:resource="with space/{name}" resource={{literal}}/{name}
func (s *Store) Quoted(ctx context.Context, name string) error {
	s.record(ctx)
	return nil
}

// Ping has unnamed parameters and a directive over two lines.
//
//zklock:resource=fixed
//zklock:mode=read
func (s *Store) Ping(context.Context, string) error {
	s.mu.Lock()
	s.seen = append(s.seen, "ping")
	s.mu.Unlock()
	return nil
}

// Variadic passes its variadic parameter on, and has two results.
//
//zklock:resource=v/{first}
func (s *Store) Variadic(ctx context.Context, first string, rest ...string) (string, error) {
	s.record(ctx)
	return strings.Join(append([]string{first}, rest...), ","), nil
}

// Collide has parameters named like what the generated body uses.
//
//zklock:resource=c/{zklock}/{strconv}/{lease}/{err}/{w}/{r0}/{string}
func (s *Store) Collide(ctx context.Context, zklock, strconv, lease, err, w, r0, string string) (int, error) {
	s.record(ctx)
	return len(zklock + strconv + lease + err + w + r0 + string), nil
}

// Blank has a blank context parameter and a blank parameter.
//
//zklock:resource=blank/{x}
func (s *Store) Blank(_ context.Context, x int, _ string) error { return nil }

// Things takes a type of another package, imported under another name.
//
//zklock:resource=thing/{t.Name} try
func (s *Store) Things(ctx context.Context, t o.Thing) (o.Thing, error) {
	s.record(ctx)
	return t, nil
}

// Value has a method with a value receiver.
type Value struct{ S *Store }

// Get is marked on a value receiver.
//
//zklock:resource=value/{n}
func (v Value) Get(ctx context.Context, n uint16) error {
	v.S.record(ctx)
	return nil
}

// RunJob is a package-level function.
//
//zklock:resource=jobs/{name} wait=1500ms
func RunJob(ctx context.Context, s *Store, name string) error {
	s.record(ctx)
	return nil
}

// job is unexported; its parameter job would hide it, and its parameter
// locker the locker parameter.
//
//zklock:resource=job/{job}/{locker}
func job(ctx context.Context, s *Store, job string, locker int) (string, error) {
	s.record(ctx)
	return job, nil
}

// cache is an unexported type.
type cache struct{ s *Store }

// get is an unexported method.
//
//zklock:resource=cache/{key} mode=read wait=2m
func (c *cache) get(ctx context.Context, key string) (string, error) {
	c.s.record(ctx)
	return "v:" + key, nil
}
