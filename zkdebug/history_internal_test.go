package zkdebug

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/zklockkit/zklockkit/zklock"
)

// Every wait lands in a bucket whose upper edge is at most 25% above it,
// and the buckets tile the range without gaps.
func TestWaitHistBuckets(t *testing.T) {
	for i := 1; i < histBuckets; i++ {
		lo, hi := histUpper(i-1), histUpper(i)
		if hi <= lo || float64(hi) > 1.25*float64(lo)+1 {
			t.Fatalf("bucket %d: (%v, %v]: want a step of at most 25%%", i, lo, hi)
		}
	}
	for _, d := range []time.Duration{0, 1, 1023, 1024, 1279, 1280, 999 * time.Microsecond, 800 * time.Microsecond,
		time.Millisecond, 37 * time.Millisecond, 3*time.Second + 7, time.Hour, 2 * time.Hour} {
		i := histIndex(d)
		if d >= histUpper(i) || i > 0 && d < histUpper(i-1) {
			t.Errorf("%v in bucket %d, which holds [%v, %v)", d, i, histUpper(i-1), histUpper(i))
		}
		if d >= 1024 && float64(histUpper(i)) > 1.25*float64(d) {
			t.Errorf("%v: bucket edge %v is more than 25%% above", d, histUpper(i))
		}
	}
	if histIndex(100*time.Hour) != histBuckets-1 || histIndex(-time.Second) != 0 {
		t.Error("waits out of range are not clamped")
	}
}

// Percentiles are ranks in the recorded distribution, not means: 98 fast
// waits and 2 slow ones have a fast p50 and a slow p99 (a mean would say
// 11 ms for both).
func TestWaitHistQuantiles(t *testing.T) {
	var h waitHist
	if _, ok := h.quantile(0.5); ok {
		t.Fatal("an empty histogram has a quantile")
	}
	waits := make([]time.Duration, 0, 100)
	for range 98 {
		waits = append(waits, time.Millisecond)
	}
	waits = append(waits, 500*time.Millisecond, 520*time.Millisecond)
	rand.Shuffle(len(waits), func(i, j int) { waits[i], waits[j] = waits[j], waits[i] })
	for _, w := range waits {
		h.add(w)
	}
	p50, _ := h.quantile(0.5)
	p98, _ := h.quantile(0.98)
	p99, _ := h.quantile(0.99)
	if p50 <= time.Millisecond || p50 > 1250*time.Microsecond || p98 != p50 {
		t.Errorf("p50 %v, p98 %v: want the bucket just above 1ms", p50, p98)
	}
	if p99 <= 500*time.Millisecond || p99 > 625*time.Millisecond {
		t.Errorf("p99 %v: want the bucket of the 500ms wait", p99)
	}
	if h.count() != 100 {
		t.Errorf("count %d", h.count())
	}
}

// events feeds h one acquire of resource that waited wait and ended at
// at, acquired or failed.
func acquire(h *History, id uint64, resource string, at time.Time, wait time.Duration, position int, failed bool) {
	ctx := context.Background()
	h.Observe(ctx, zklock.Event{Kind: zklock.EventStarted, ID: id, Resource: resource, Time: at.Add(-wait)})
	h.Observe(ctx, zklock.Event{Kind: zklock.EventEnqueued, ID: id, Resource: resource, Position: position, Time: at.Add(-wait)})
	kind := zklock.EventAcquired
	if failed {
		kind = zklock.EventFailed
	}
	h.Observe(ctx, zklock.Event{Kind: kind, ID: id, Resource: resource, Wait: wait, Time: at})
}

// The window: a bucket per minute, oldest first, the minute under way
// last; what is older than the window is gone, and a bucket's counts are
// its own.
func TestHistoryWindow(t *testing.T) {
	h := NewHistory()
	now := time.Now()
	// The middle of minute -k: an event and its acquire's start fall in it.
	base := now.Truncate(time.Minute).Add(30 * time.Second)
	minute := func(k int) time.Time { return base.Add(-time.Duration(k) * time.Minute) }
	acquire(h, 1, "accounts/1", minute(20), time.Second, 3, false) // before the window
	acquire(h, 2, "accounts/2", minute(14), 2*time.Millisecond, 1, false)
	acquire(h, 3, "accounts/3", minute(14), 40*time.Millisecond, 2, false)
	acquire(h, 4, "accounts/4", minute(3), 300*time.Millisecond, 7, true)
	acquire(h, 5, "reports/daily", minute(0), time.Millisecond, 0, false)
	h.Observe(context.Background(), zklock.Event{Kind: zklock.EventLost, ID: 2, Resource: "accounts/2", Time: minute(1),
		Err: &zklock.LostError{Resource: "accounts/2", Reason: zklock.LossNodeDeleted}})
	h.Observe(context.Background(), zklock.Event{Kind: zklock.EventLost, ID: 3, Resource: "accounts/3", Time: minute(1),
		Err: &zklock.LostError{Resource: "accounts/3", Reason: zklock.LossSessionExpired}})

	v := h.view(now)
	if len(v.Classes) != 2 || v.Classes[0].Class != "accounts/{id}" || v.Classes[1].Class != "reports/daily" {
		t.Fatalf("classes %+v", v.Classes)
	}
	acc := v.Classes[0]
	if len(acc.Buckets) != HistoryMinutes+1 || acc.Acquired != 2 || acc.GaveUp != 1 || acc.Lost != 2 {
		t.Fatalf("accounts: %d buckets, %d acquired, %d gave up, %d lost", len(acc.Buckets), acc.Acquired, acc.GaveUp, acc.Lost)
	}
	if !v.From.Equal(acc.Buckets[0].Start) || acc.Buckets[HistoryMinutes].Start.After(now) ||
		now.Sub(acc.Buckets[HistoryMinutes].Start) >= time.Minute {
		t.Errorf("window from %v, last bucket %v, now %v", v.From, acc.Buckets[HistoryMinutes].Start, now)
	}
	b := acc.Buckets[HistoryMinutes-14]
	if b.Acquired != 2 || b.MaxAhead != 2 || b.WaitP50Seconds == nil || *b.WaitP50Seconds > 0.0025 ||
		*b.WaitP99Seconds < 0.04 || *b.WaitP99Seconds > 0.05 {
		t.Errorf("minute -14: %+v", b)
	}
	if b := acc.Buckets[HistoryMinutes-3]; b.GaveUp != 1 || b.Acquired != 0 || b.WaitP50Seconds != nil || b.MaxAhead != 7 {
		t.Errorf("minute -3: %+v", b)
	}
	if b := acc.Buckets[HistoryMinutes-1]; b.Lost["node_deleted"] != 1 || b.Lost["session_expired"] != 1 || len(b.Lost) != 2 {
		t.Errorf("minute -1 lost %v", b.Lost)
	}
	for i, b := range acc.Buckets {
		if b.MaxWaiting != 0 && i != HistoryMinutes-14 && i != HistoryMinutes-3 {
			t.Errorf("bucket %d: %d waiting, with nothing in progress", i, b.MaxWaiting)
		}
	}
}

// Waiting counts carry over minutes without events: an acquire that
// waits for five minutes shows in every one of them.
func TestHistoryCarriesWaiting(t *testing.T) {
	h := NewHistory()
	now := time.Now()
	start := now.Truncate(time.Minute).Add(-5*time.Minute + 10*time.Second)
	ctx := context.Background()
	h.Observe(ctx, zklock.Event{Kind: zklock.EventStarted, ID: 1, Resource: "jobs/nightly", Time: start})
	h.Observe(ctx, zklock.Event{Kind: zklock.EventStarted, ID: 2, Resource: "jobs/nightly", Time: start})
	h.Observe(ctx, zklock.Event{Kind: zklock.EventAcquired, ID: 1, Resource: "jobs/nightly", Time: start.Add(time.Second)})
	// A lease with no acquire (Lease.Downgrade) changes nothing.
	h.Observe(ctx, zklock.Event{Kind: zklock.EventAcquired, ID: 9, Resource: "jobs/nightly", Time: now})
	v := h.view(now)
	if len(v.Classes) != 1 {
		t.Fatalf("%+v", v.Classes)
	}
	var got []int32
	for _, b := range v.Classes[0].Buckets {
		got = append(got, b.MaxWaiting)
	}
	want := slices.Repeat([]int32{0}, HistoryMinutes+1)
	want[HistoryMinutes-5] = 2
	for i := HistoryMinutes - 4; i <= HistoryMinutes; i++ {
		want[i] = 1
	}
	if !slices.Equal(got, want) {
		t.Errorf("waiting per minute %v, want %v", got, want)
	}
}

// Past HistoryMaxClasses, new classes share one row, shown last.
func TestHistoryOverflow(t *testing.T) {
	h := NewHistory(WithHistoryClass(func(r string) string { return r }))
	now := time.Now()
	for i := range HistoryMaxClasses + 8 {
		acquire(h, uint64(i+1), fmt.Sprintf("r%02d", i), now, time.Duration(i+1)*time.Millisecond, 0, false)
	}
	v := h.view(now)
	if len(v.Classes) != HistoryMaxClasses+1 {
		t.Fatalf("%d rows, want %d", len(v.Classes), HistoryMaxClasses+1)
	}
	last := v.Classes[len(v.Classes)-1]
	if !last.Other || last.Acquired != 8 || last.Name() != "other classes" {
		t.Errorf("last row %+v", last)
	}
	// The rest by time waited, most first.
	if v.Classes[0].Class != fmt.Sprintf("r%02d", HistoryMaxClasses-1) {
		t.Errorf("first row %q", v.Classes[0].Class)
	}
}

// The memory bound the docs state is the code's.
func TestHistoryMemoryDocumented(t *testing.T) {
	slotBytes, ringBytes := unsafe.Sizeof(slot{}), unsafe.Sizeof(classRing{})
	all := float64(ringBytes*(HistoryMaxClasses+1)) / 1024
	want := []string{
		fmt.Sprintf("buckets of %d bytes", slotBytes),
		fmt.Sprintf("(%.1f KiB a class, %.0f KiB in all)", float64(ringBytes)/1024, all),
	}
	for _, file := range []string{"history.go", "../docs/operations.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`\s*\n\s*(// )?`).ReplaceAllString(string(b), " ")
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s does not say %q", file, w)
			}
		}
		for _, n := range []string{fmt.Sprint(HistoryMinutes), fmt.Sprint(HistoryMaxClasses)} {
			if !strings.Contains(text, n) {
				t.Errorf("%s does not name %s", file, n)
			}
		}
	}
}

// The look-up's bounds that docs/operations.md quotes are the code's.
func TestLookupBoundsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\s+`).ReplaceAllString(string(b), " ")
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	s := func(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }
	for _, want := range []string{
		fmt.Sprintf("at most %d a page", MaxLookups),
		fmt.Sprintf("(default %s)", ms(DefaultLookupBudget)),
		fmt.Sprintf("(`?refresh=N`, else %s)", s(DefaultLookupCache)),
		fmt.Sprintf("(at most %s, one per queue at a time)", s(lookupReadLimit)),
		fmt.Sprintf("the last %d minutes", HistoryMinutes),
		fmt.Sprintf("fixed: %d classes", HistoryMaxClasses),
		fmt.Sprintf("a ring of %d buckets", historySlots),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("docs/operations.md does not say %q", want)
		}
	}
}
