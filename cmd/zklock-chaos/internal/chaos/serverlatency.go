package chaos

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// A member can be slow without stopping: its request pipeline backs up
// behind a busy leader, a full disk queue or cores taken by everyone
// else, and no safepoint logs it. ZooKeeper measures that itself: mntr's
// zk_max_latency is the longest any request spent in the member, from its
// arrival to its answer, since the last srst, and zk_outstanding_requests
// how many wait now. The campaign asks each member every latencyTick and
// resets the figures after each answer, so that each sample covers one
// tick. The reset loses the requests answered between the two words,
// and after a stop of the member those are the ones that waited: so the
// time mntr itself took to be answered counts as a request too, and so
// does the time the reset took, in the next sample (a srst sent just as
// a stop begins waits it out, then wipes the held requests' latency,
// while the mntr before it was answered at once). A sample
// whose longest request took slowMin or more is recorded as an
// EvServerSlow. The checker reports them and lays them beside every
// liveness sample over its target; a sample of stallMin or more is a stop
// of that member to its clients, and puts a hand-off or a free slot whose
// processes it served in a window of its own (checker.slowFor).

const (
	// latencyTick is how often each member is asked.
	latencyTick = 250 * time.Millisecond
	// slowMin is the shortest request latency recorded.
	slowMin = 100 * time.Millisecond
)

// fourLetterer is a member that answers four-letter words: a
// *zktest.Server.
type fourLetterer interface {
	FourLetter(cmd string) (string, error)
}

// watchServerLatency asks each of servers (servers[i] is zk<i+1>) for its
// request latency every latencyTick, and reports each slow sample, until
// the returned func is first called. A member that does not answer
// (killed, restarting) is asked again at the next tick; its sample then
// covers the time since its last answer.
func watchServerLatency[S fourLetterer](servers []S, report func(Event)) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			t := time.NewTicker(latencyTick)
			defer t.Stop()
			last := time.Now()
			_, _ = s.FourLetter("srst")
			var reset time.Duration // the last srst's wait, not yet reported
			for {
				select {
				case <-quit:
					return
				case <-t.C:
				}
				asked := time.Now()
				out, err := s.FourLetter("mntr")
				now := time.Now()
				if err != nil {
					continue
				}
				rtt, word := now.Sub(asked), "mntr"
				if reset > rtt {
					rtt, word = reset, "srst"
				}
				_, _ = s.FourLetter("srst")
				reset = time.Since(now)
				if e, ok := slowSample(out, rtt, word, i+1, last, now); ok {
					report(e)
				}
				last = now
			}
		})
	}
	return sync.OnceFunc(func() {
		close(quit)
		wg.Wait()
	})
}

// slowSample is the EvServerSlow of member server's mntr answer out,
// which covers from last to now, if its longest request took slowMin or
// more. rtt is the longest wait of the sampler's own words in that time
// (word: "mntr" or "srst"), and counts as a request.
func slowSample(out string, rtt time.Duration, word string, server int, last, now time.Time) (Event, bool) {
	m := mntrValues(out)
	maxMS, ok := m["zk_max_latency"]
	if !ok {
		return Event{}, false
	}
	e := Event{Kind: EvServerSlow, T: last.UnixNano(), End: now.UnixNano(), Server: server,
		Latency: maxMS, Outstanding: m["zk_outstanding_requests"]}
	if r := rtt.Milliseconds(); r > maxMS {
		e.Latency, e.Detail = r, word
	}
	return e, time.Duration(e.Latency)*time.Millisecond >= slowMin
}

// mntrValues parses the integer lines of a mntr answer ("key\tvalue").
func mntrValues(out string) map[string]int64 {
	m := map[string]int64{}
	for line := range strings.SplitSeq(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}
