package zklock

import "time"

// The bound on the leaderless gap that docs/guarantees.md states: from
// the moment a leader's process dies (or is cut off) to the moment the
// next candidate leads. ZooKeeper expires a silent session no sooner than
// a session timeout after it last heard of it, and no later than one tick
// after that: it files each session's expiry under the next multiple of
// tickTime (ExpiryQueue.roundToNextInterval). On an ensemble the leader,
// which expires sessions, hears of a session on a follower when it pings
// that follower, every half tick. Then the expiry is committed (a write),
// the candidate behind the dead leader's node is told by its watch and
// takes over with at most a listing and a sync: leaderGapSlack bounds
// those. TestIntegration_LeaderGapOnDefaultTick checks the bound on a
// server with ZooKeeper's default tickTime, 2s; the doc test checks that
// the docs quote it.
const (
	// leaderGapSlack is the allowance for committing the expiry, the watch
	// that tells the next candidate and its taking over: milliseconds on
	// a healthy ensemble.
	leaderGapSlack = time.Second
	// leaderGapFollowerTicks is what a follower's report of the session
	// adds on an ensemble: half a tick.
	leaderGapFollowerTicks = 0.5
)

// leaderGapBound is the bound for a session timeout and tickTime; an
// ensemble adds the follower's report (leaderGapFollowerTicks).
func leaderGapBound(timeout, tick time.Duration, ensemble bool) time.Duration {
	b := timeout + tick + leaderGapSlack
	if ensemble {
		b += time.Duration(leaderGapFollowerTicks * float64(tick))
	}
	return b
}

// LeaderGapBound is leaderGapBound, for the package's external tests.
var LeaderGapBound = leaderGapBound
