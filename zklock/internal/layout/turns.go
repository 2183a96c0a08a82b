package layout

import "container/heap"

// Turns returns, for each node of kids (a sorted queue), how many times
// its holders must all leave before the node holds, were each group of
// holders to leave together: 0 for a holder. It applies Rule, round by
// round, in one pass: an exclusive or write node holds once every node
// ahead has gone, so it is one turn after the last of them; a reader
// once every writer or exclusive node ahead has gone (the readers ahead
// of it hold with it); a semaphore node once every node of another kind
// ahead has gone and fewer than limit nodes are ahead, one turn after the
// later of the last of those and the limit-th latest of all. For an
// exclusive queue a node's turns are its position.
func Turns(kids []Child, limit int) []int {
	if limit < 1 {
		limit = 1
	}
	turns := make([]int, len(kids))
	// The latest turn of a node ahead; of a node ahead that blocks a
	// reader; of a node ahead that blocks a semaphore node.
	last, lastBlocking, lastOther := -1, -1, -1
	var latest minHeap // the limit latest turns of the nodes ahead
	for i, k := range kids {
		t := last + 1
		switch k.Kind {
		case Read:
			t = lastBlocking + 1
		case Semaphore:
			t = lastOther + 1
			if latest.Len() == limit {
				t = max(t, latest[0]+1)
			}
		}
		turns[i] = t
		last = max(last, t)
		if k.Kind != Read {
			lastBlocking = max(lastBlocking, t)
		}
		if k.Kind != Semaphore {
			lastOther = max(lastOther, t)
		}
		switch {
		case latest.Len() < limit:
			heap.Push(&latest, t)
		case t > latest[0]:
			latest[0] = t
			heap.Fix(&latest, 0)
		}
	}
	return turns
}

// minHeap is a heap of ints, smallest first (container/heap).
type minHeap []int

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
