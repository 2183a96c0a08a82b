package zkdebug

import (
	"math/bits"
	"time"
)

// A waitHist counts wait times in buckets that grow by a quarter at each
// step: every power of two from 1.024 µs to about 73 minutes is split in
// four equal parts, so a bucket's upper edge is at most 25% above any wait
// it holds. Percentiles read from it are honest (a rank in the recorded
// distribution, not a mean) and say which bucket they fall in.
type waitHist [histBuckets]uint32

const (
	histMinExp  = 10 // waits under 2^10 ns (1.024 µs) share bucket 0
	histMaxExp  = 42 // waits of 2^43 ns (2.4 h) and more share the last bucket
	histSub     = 4  // buckets per power of two
	histBuckets = (histMaxExp-histMinExp+1)*histSub + 1
)

// histIndex returns the bucket of wait d.
func histIndex(d time.Duration) int {
	ns := uint64(max(d, 0))
	e := bits.Len64(ns) - 1 // ns is in [2^e, 2^(e+1))
	if e < histMinExp {
		return 0
	}
	if e > histMaxExp {
		return histBuckets - 1
	}
	m := int(ns>>(e-2)) & (histSub - 1) // which quarter of the power of two
	return (e-histMinExp)*histSub + m + 1
}

// histUpper returns the upper edge of bucket i: every wait it counts is
// shorter.
func histUpper(i int) time.Duration {
	if i <= 0 {
		return 1 << histMinExp
	}
	e, m := (i-1)/histSub+histMinExp, (i-1)%histSub
	return time.Duration(uint64(histSub+m+1) << (e - 2))
}

func (h *waitHist) add(d time.Duration) { h[histIndex(d)]++ }

// count returns the number of waits recorded.
func (h *waitHist) count() uint64 {
	var n uint64
	for _, c := range h {
		n += uint64(c)
	}
	return n
}

// quantile returns the upper edge of the bucket holding the wait of rank
// ceil(q×n) (q in (0, 1]), and false when h is empty.
func (h *waitHist) quantile(q float64) (time.Duration, bool) {
	n := h.count()
	if n == 0 {
		return 0, false
	}
	rank := uint64(q * float64(n))
	if float64(rank) < q*float64(n) || rank == 0 {
		rank++
	}
	var seen uint64
	for i, c := range h {
		seen += uint64(c)
		if seen >= rank {
			return histUpper(i), true
		}
	}
	return histUpper(histBuckets - 1), true
}

// merge adds o's counts to h.
func (h *waitHist) merge(o *waitHist) {
	for i, c := range o {
		h[i] += c
	}
}
