package layout

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// turnsByRule applies Rule round by round: in each round the nodes that
// hold (by Rule, over the nodes left) hold together, then leave.
func turnsByRule(kids []Child, limit int) []int {
	turns := make([]int, len(kids))
	left := slices.Clone(kids)
	idx := make([]int, len(kids))
	for i := range idx {
		idx[i] = i
	}
	for round := 0; len(left) > 0; round++ {
		var nextKids []Child
		var nextIdx []int
		for i := range left {
			if held, _ := Rule(left, i, limit); held {
				turns[idx[i]] = round
			} else {
				nextKids, nextIdx = append(nextKids, left[i]), append(nextIdx, idx[i])
			}
		}
		left, idx = nextKids, nextIdx
	}
	return turns
}

// Turns agrees with Rule applied round by round, over random queues of
// every kind, mixed too, and semaphore limits.
func TestTurnsFollowsRule(t *testing.T) {
	rnd := rand.New(rand.NewPCG(33, 4))
	kinds := []Kind{Exclusive, Read, Write, Semaphore}
	for n := range 2000 {
		size := rnd.IntN(12)
		kids := make([]Child, size)
		pure := n%2 == 0 // half the queues have one kind of lock (or readers and writers), half are mixed
		k0 := kinds[rnd.IntN(len(kinds))]
		for i := range kids {
			k := kinds[rnd.IntN(len(kinds))]
			if pure {
				switch {
				case k0 == Read || k0 == Write:
					k = []Kind{Read, Write}[rnd.IntN(2)]
				default:
					k = k0
				}
			}
			kids[i] = Child{Seq: int64(i), Kind: k}
		}
		limit := rnd.IntN(4)
		if got, want := Turns(kids, limit), turnsByRule(kids, limit); !slices.Equal(got, want) {
			t.Fatalf("queue %v, limit %d: Turns %v; by Rule %v", kids, limit, got, want)
		}
	}
}

// In an exclusive queue a node's turns are its position; in a semaphore
// queue of limit n, its position divided by n; readers between two
// writers hold together.
func TestTurnsExamples(t *testing.T) {
	q := func(ks ...Kind) []Child {
		kids := make([]Child, len(ks))
		for i, k := range ks {
			kids[i] = Child{Seq: int64(i), Kind: k}
		}
		return kids
	}
	for _, c := range []struct {
		kids  []Child
		limit int
		want  []int
	}{
		{q(Exclusive, Exclusive, Exclusive, Exclusive), 0, []int{0, 1, 2, 3}},
		{q(Semaphore, Semaphore, Semaphore, Semaphore, Semaphore), 2, []int{0, 0, 1, 1, 2}},
		{q(Read, Read, Write, Read, Read, Write), 0, []int{0, 0, 1, 2, 2, 3}},
		{q(Write, Read, Read), 0, []int{0, 1, 1}},
		// A semaphore node waits for every node of another kind ahead.
		{q(Exclusive, Semaphore, Semaphore, Semaphore), 2, []int{0, 1, 1, 2}},
		{q(Semaphore, Read, Semaphore, Semaphore), 3, []int{0, 1, 2, 2}},
	} {
		if got := Turns(c.kids, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("%v limit %d: %v, want %v", c.kids, c.limit, got, c.want)
		}
	}
}
