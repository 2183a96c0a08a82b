package forms

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	stdtime "time" // the package declares time

	"github.com/zklockkit/zklockkit/zklock"

	o "example.com/zkgen/other" // the package declares other
)

func connect(t *testing.T) *zklock.Client {
	t.Helper()
	addr, root := os.Getenv("ZKLOCK_SERVERS"), os.Getenv("ZKGEN_ROOT")
	if addr == "" || root == "" {
		t.Fatal("ZKLOCK_SERVERS and ZKGEN_ROOT must be set: this package is tested by codegen's TestIntegration_GeneratedCode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), stdtime.Minute)
	defer cancel()
	c, err := zklock.Connect(ctx, []string{addr}, zklock.WithRoot(root+"/"+t.Name()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Every generated function locks the resource its template names, in the
// documented format, with the mode its directive asks for.
func TestResourceNames(t *testing.T) {
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*stdtime.Minute)
	defer cancel()
	s := &Store{}
	w := NewLockedStore(s, c)
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	check("Ints", w.Ints(ctx, -1, -9223372036854775808, 3, 18446744073709551615, 255, -7, -128))
	check("Strings", w.Strings(ctx, "id-1", StatusActive, Key{A: "x", B: "y"}))
	check("Fields", w.Fields(ctx, &Order{ID: "o1", Customer: &Customer{Name: "Ann", Region: "eu"}, Meta: Meta{Tenant: "acme"}}))
	check("Quoted", w.Quoted(ctx, "q"))
	check("Ping", w.Ping(ctx, "ignored"))
	joined, err := w.Variadic(ctx, "a", "b", "c")
	check("Variadic", err)
	if joined != "a,b,c" {
		t.Errorf("Variadic = %q, want a,b,c", joined)
	}
	n, err := w.Collide(ctx, "z", "s", "l", "e", "w", "r", "t")
	check("Collide", err)
	if n != 7 {
		t.Errorf("Collide = %d, want 7", n)
	}
	check("Blank", w.Blank(ctx, 5, "x"))
	th, err := w.Things(ctx, o.Thing{Name: "thing"})
	check("Things", err)
	if th.Name != "thing" {
		t.Errorf("Things returned %+v", th)
	}
	check("Value.Get", NewLockedValue(&Value{S: s}, c).Get(ctx, 65535))
	check("RunJob", LockedRunJob(ctx, c, s, "nightly"))
	j, err := lockedJob(ctx, c, s, "j1", 3)
	check("job", err)
	if j != "j1" {
		t.Errorf("job = %q", j)
	}
	v, err := newLockedCache(&cache{s: s}, c).get(ctx, "k")
	check("cache.get", err)
	if v != "v:k" {
		t.Errorf("get = %q", v)
	}

	want := []string{
		"n/-1/-9223372036854775808/3/18446744073709551615/255/-7/-128 exclusive",
		"s/id-1/active/x:y exclusive",
		"o/o1/Ann/eu/acme write",
		"with space/q,{literal}/q exclusive",
		"ping",
		"v/a exclusive",
		"c/z/s/l/e/w/r/t exclusive",
		"thing/thing exclusive",
		"value/65535 exclusive",
		"jobs/nightly exclusive",
		"job/j1/3 exclusive",
		"cache/k read",
	}
	if got := s.Seen(); !slices.Equal(got, want) {
		t.Errorf("resources locked:\n got %q\nwant %q", got, want)
	}
}

// Placeholder values are escaped as by every zklockkit front end ("/" as
// %2F, "%" as %25), and an empty one is an error matching
// zklock.ErrInvalidResource, before anything is locked.
func TestEscapedAndEmptyValues(t *testing.T) {
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*stdtime.Minute)
	defer cancel()
	s := &Store{}
	w := NewLockedStore(s, c)
	if err := w.Strings(ctx, "a/b%c", StatusActive, Key{A: "x", B: "y"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Strings(ctx, "", StatusActive, Key{A: "x", B: "y"}); !errors.Is(err, zklock.ErrInvalidResource) ||
		!strings.Contains(err.Error(), "empty value for {id}") {
		t.Errorf("empty value: %v", err)
	}
	if got, want := s.Seen(), []string{"s/a%2Fb%25c/active/x:y exclusive"}; !slices.Equal(got, want) {
		t.Errorf("resources locked: %q, want %q", got, want)
	}
}

// wait= bounds the wait (RunJob: 1500ms); try (Things) does not wait.
func TestWaitAndTry(t *testing.T) {
	c, holder := connect(t), connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*stdtime.Minute)
	defer cancel()
	s := &Store{}
	for _, r := range []string{"jobs/busy", "thing/busy"} {
		l, err := holder.Acquire(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(ctx)
	}
	if err := LockedRunJob(ctx, c, s, "busy"); !errors.Is(err, zklock.ErrWaitTimeout) {
		t.Errorf("RunJob on a held resource = %v, want ErrWaitTimeout", err)
	}
	if _, err := NewLockedStore(s, c).Things(ctx, o.Thing{Name: "busy"}); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("Things on a held resource = %v, want ErrLocked", err)
	}
	if len(s.Seen()) != 0 {
		t.Errorf("methods ran without their lock: %q", s.Seen())
	}
}

func TestNilArgumentsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewLockedStore(nil, c) did not panic")
		}
	}()
	NewLockedStore(nil, connect(t))
}
