package layout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestParseChild(t *testing.T) {
	for name, want := range map[string]Child{
		"_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-0000000007": {Seq: 7, Kind: Exclusive},
		"lock-0000000012": {Seq: 12, Kind: Exclusive}, // go-zookeeper zk.Lock
		"_c_0123456789abcdef0123456789abcdef-lock-0000000003":        {Seq: 3, Kind: Exclusive},
		"_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-__READ__0000000001": {Seq: 1, Kind: Read},
		"_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-__WRIT__0000000002": {Seq: 2, Kind: Write},
		"0123456789abcdef0123456789abcdef__lock__0000000004":         {Seq: 4, Kind: Write}, // kazoo
		"0123456789abcdef0123456789abcdef__rlock__0000000005":        {Seq: 5, Kind: Read},
		"_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-sema-0000000009":    {Seq: 9, Kind: Semaphore},
	} {
		got, ok := Parse(name)
		if !ok || got.Seq != want.Seq || got.Kind != want.Kind {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", name, got, ok, want)
		}
	}
	// Another recipe's sequential nodes count as exclusive nodes in order:
	// ZooKeeper's own WriteLock, and any other layout.
	for name, seq := range map[string]int64{
		"x-72057594037927936-0000000011": 11,
		"foo-0000000001":                 1,
		"0000000001":                     1,
		"member_0000000002":              2,
	} {
		if got, ok := Parse(name); !ok || got.Seq != seq || got.Kind != Exclusive {
			t.Errorf("Parse(%q) = %+v, %v; want an exclusive node with seq %d", name, got, ok, seq)
		}
	}
	for _, bad := range []string{"", "lease_holder", "lock-12", "lock-00000000x1", "leases", "000000001"} {
		if c, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) = %+v, want no layout", bad, c)
		}
	}
}

func TestProtectedID(t *testing.T) {
	for name, want := range map[string]string{
		"_c_8d3a6f2e-2b1c-4a5e-9f00-1234567890ab-lock-0000000007": "8d3a6f2e-2b1c-4a5e-9f00-1234567890ab",
		"_c_0123456789abcdef0123456789abcdef-lock-0000000003":     "0123456789abcdef0123456789abcdef",
		"lock-0000000012": "",
	} {
		if got := ProtectedID(name); got != want {
			t.Errorf("ProtectedID(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestSortAndRule(t *testing.T) {
	names := []string{
		"x__rlock__0000000005", "_c_a-__WRIT__0000000003", "_c_b-__READ__0000000001",
		"_c_c-__READ__0000000002", "lease_holder", "_c_d-__READ__0000000004",
	}
	kids, unknown := Sort(names)
	if len(unknown) != 1 || unknown[0] != "lease_holder" {
		t.Fatalf("unknown = %v", unknown)
	}
	for i := 1; i < len(kids); i++ {
		if kids[i-1].Seq >= kids[i].Seq {
			t.Fatalf("not sorted: %+v", kids)
		}
	}
	// seq 1,2 readers hold; 3 writer waits on 2; 4 and 5 readers wait on the writer (3).
	type res struct {
		held  bool
		watch int
	}
	want := []res{{true, -1}, {true, -1}, {false, 1}, {false, 2}, {false, 2}}
	for i := range kids {
		h, w := Rule(kids, i, 0)
		if h != want[i].held || w != want[i].watch {
			t.Errorf("Rule(%d: %s) = %v,%d; want %+v", i, kids[i].Name, h, w, want[i])
		}
	}
	sem, _ := Sort([]string{"a-sema-0000000001", "b-sema-0000000002", "c-sema-0000000003", "d-sema-0000000004"})
	for i, want := range []res{{true, -1}, {true, -1}, {false, 1}, {false, 2}} {
		if h, w := Rule(sem, i, 2); h != want.held || w != want.watch {
			t.Errorf("semaphore(2) Rule(%d) = %v,%d; want %+v", i, h, w, want)
		}
	}
	// A node of any other kind ahead of a semaphore node excludes it,
	// whatever the limit: an exclusive, write, read or foreign holder, or
	// one further back among semaphore holders.
	for _, q := range [][]string{
		{"a-lock-0000000001", "b-sema-0000000002", "c-sema-0000000003"},
		{"a-__WRIT__0000000001", "b-sema-0000000002", "c-sema-0000000003"},
		{"a-__READ__0000000001", "b-sema-0000000002", "c-sema-0000000003"},
		{"x-72057594037927936-0000000001", "b-sema-0000000002", "c-sema-0000000003"},
	} {
		kids, _ := Sort(q)
		for i, want := range []res{{true, -1}, {false, 0}, {false, 1}} {
			if h, w := Rule(kids, i, 3); h != want.held || w != want.watch {
				t.Errorf("%v: semaphore(3) Rule(%d) = %v,%d; want %+v", q, i, h, w, want)
			}
		}
	}
	mixed, _ := Sort([]string{"a-sema-0000000001", "b-lock-0000000002", "c-sema-0000000003"})
	for i, want := range []res{{true, -1}, {false, 0}, {false, 1}} {
		if h, w := Rule(mixed, i, 3); h != want.held || w != want.watch {
			t.Errorf("%v: semaphore(3) Rule(%d) = %v,%d; want %+v", mixed, i, h, w, want)
		}
	}
}

// A waiter's view of its queue (SortAhead) is exactly the prefix of the
// whole sorted queue up to its own node, so rule decides the same on both,
// for every node of random queues of every layout.
func TestSortAheadIsPrefix(t *testing.T) {
	marks := []string{"-lock-", "-__READ__", "-__WRIT__", "__lock__", "__rlock__", "-sema-"}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(30)
		names := make([]string, 0, n+1)
		for i := range n {
			names = append(names, fmt.Sprintf("_c_%d%s%010d", i, marks[rng.IntN(len(marks))], rng.IntN(40)))
		}
		names = append(names, "not-a-lock-node")
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		all, unknownAll := Sort(names)
		for _, ours := range names {
			kids, unknown, _, _ := SortAhead(names, ours)
			if !slices.Equal(unknown, unknownAll) {
				t.Fatalf("round %d: unknown %v, want %v", round, unknown, unknownAll)
			}
			i := slices.IndexFunc(all, func(c Child) bool { return c.Name == ours })
			if i < 0 {
				continue // the unknown Name: not a waiter
			}
			if !slices.Equal(kids, all[:i+1]) {
				t.Fatalf("round %d: SortAhead(%s) = %v, want %v", round, ours, kids, all[:i+1])
			}
			for _, limit := range []int{1, 3} {
				h1, w1 := Rule(kids, i, limit)
				h2, w2 := Rule(all, i, limit)
				if h1 != h2 || w1 != w2 {
					t.Fatalf("round %d: rule differs for %s", round, ours)
				}
			}
		}
	}
}

// HeldWithout decides as Rule does on the queue with the node left out,
// for every node and every node ahead of it, of random queues of every
// layout and limit.
func TestHeldWithout(t *testing.T) {
	marks := []string{"-lock-", "-__READ__", "-__WRIT__", "-sema-"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		n := 1 + rng.IntN(12)
		mark := marks[rng.IntN(len(marks))]
		names := make([]string, 0, n)
		mixed := round%3 == 0 // every kind, semaphores among the others
		for i := range n {
			switch {
			case mixed:
				mark = marks[rng.IntN(len(marks))]
			case mark != "-sema-" && mark != "-lock-":
				mark = marks[1+rng.IntN(2)] // readers and writers mixed
			}
			names = append(names, fmt.Sprintf("_c_%d%s%010d", i, mark, i))
		}
		kids, _ := Sort(names)
		for i := range kids {
			for j := range i {
				rest := slices.Delete(slices.Clone(kids), j, j+1)
				for _, limit := range []int{0, 1, 2, 3} {
					want, _ := Rule(rest, i-1, limit)
					if got := HeldWithout(kids, i, j, limit); got != want {
						t.Fatalf("round %d: HeldWithout(%v, %d, %d, %d) = %v, Rule without it %v", round, kids, i, j, limit, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkSortAhead measures a waiter's view of a listing of 32 nodes
// (the bench's contenders-32) and of 1,000 (zk.Lock's layout), its node
// last: the divergence check (two nodes of one sequence number) rides on
// the sort.
func BenchmarkSortAhead(b *testing.B) {
	for _, n := range []int{32, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			names := make([]string, n)
			for i := range names {
				names[i] = fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-lock-%010d", i, i)
			}
			rand.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
			ours := fmt.Sprintf("_c_%08x-0000-4000-8000-000000000000-lock-%010d", n-1, n-1)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, dup := SortAhead(names, ours); dup {
					b.Fatal("dup")
				}
			}
		})
	}
}

// BenchmarkDuplicated measures the divergence check alone, over a sorted
// queue of 1,000 nodes: what the check adds to every listing.
func BenchmarkDuplicated(b *testing.B) {
	kids := make([]Child, 1000)
	for i := range kids {
		kids[i] = Child{Name: fmt.Sprint(i), Seq: int64(i)}
	}
	for b.Loop() {
		if duplicated(kids) {
			b.Fatal("dup")
		}
	}
}

// SortAheadInto keeps what SortAhead keeps, whatever the room it is given
// held before (a listing of a longer queue, of another waiter).
func TestSortAheadIntoReusesRoom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	room := make([]Child, 0, 4)
	for round := range 100 {
		n := 1 + rng.IntN(40)
		names := make([]string, 0, n)
		for i := range n {
			names = append(names, fmt.Sprintf("_c_%d-lock-%010d", i, rng.IntN(100)))
		}
		ours := names[rng.IntN(n)]
		want, wu, wb, wd := SortAhead(names, ours)
		got, gu, gb, gd := SortAheadInto(room, names, ours)
		if !slices.Equal(got, want) || !slices.Equal(gu, wu) || gb != wb || gd != wd {
			t.Fatalf("round %d: SortAheadInto = %v %v %v %v, SortAhead %v %v %v %v", round, got, gu, gb, gd, want, wu, wb, wd)
		}
		room = got
	}
}
