package zklock

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/doctest"
	"github.com/zklockkit/zklockkit/zklock/internal/session"
)

// The pages that state zklock's bounds: docs/guarantees.md is their home;
// docs/protocol.md derives the loss bound, and the package's own
// documentation states what it needs.
var (
	boundHome = []string{"docs/guarantees.md", "zklock/doc.go", "zklock/options.go", "zklock/acquire_options.go", "zklock/client.go"}
	lossHome  = append([]string{"docs/protocol.md"}, boundHome...)
	// The pages of the front ends restate the try's bound beside their
	// own answer to it (an exit code, a status).
	tryHome = append([]string{"docs/adapters.md", "docs/operations.md", "docs/protocol.md", "docs/chaos.md"}, boundHome...)
)

// TestDocBounds checks the bounds, defaults and fractions that README.md,
// docs/*.md and the package documentation quote against the code that
// computes them (see package internal/doctest): when a divisor, a cap or a
// default changes here, the pages that quote the old one fail this test,
// and a page that restates a bound instead of linking to its home fails it
// too.
func TestDocBounds(t *testing.T) {
	root, err := doctest.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := doctest.Pages(root, "zklock/doc.go", "zklock/options.go", "zklock/acquire_options.go", "zklock/client.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range doctest.Check(pages, boundFacts()) {
		t.Error(p)
	}
}

// boundFacts are the bounds, computed by the code that enforces them.
func boundFacts() []doctest.Fact {
	T := DefaultSessionTimeout
	d := doctest.Duration

	// The try's answer bound (session.AnswerBound): a divisor and a cap.
	answer := session.AnswerBound
	tryDiv := int(300 * time.Millisecond / answer(300*time.Millisecond))
	tryCap := answer(time.Hour)

	// When leases are given up (session.Session.LossDeadline), after the
	// send of the last answered sync, for a session timeout and the
	// default margin.
	givenUp := func(timeout time.Duration) time.Duration { return session.GivenUpAfter(timeout, 0) }
	interval := session.ProofInterval(T)
	proofDiv := int(T / interval)
	tickDiv := session.PingDelayDivisor
	marginDiv := int(T / session.LossMargin(0, T))
	percent := func(x time.Duration) int { return int(100 * x / T) }
	lossPct := percent(givenUp(T))             // after the last answered sync
	quietPct := percent(givenUp(T) - interval) // the shortest silence that costs a lease
	noTimePct := percent(T - interval - T/time.Duration(tickDiv))

	gap := func(timeout, tick time.Duration, ensemble bool) string {
		return d(LeaderGapBound(timeout, tick, ensemble))
	}

	fact := func(name, source, quote string, home []string, want ...any) doctest.Fact {
		return doctest.Fact{Name: name, Source: source, Quote: regexp.MustCompile(quote), Home: home, Want: want}
	}
	dur := `(\d+(?:\.\d+)? ?m?s)`
	return []doctest.Fact{
		// The try's bound.
		fact("the try's answer bound", "session.AnswerBound", `min\((?:session )?timeout ?/ ?(\d+), ?`+dur+`\)`, tryHome, tryDiv, tryCap),
		fact("the try's answer bound, in words", "session.AnswerBound", `within a (\w+) of the session timeout, at most a (\w+)`, boundHome,
			ordinal(tryDiv), map[time.Duration]string{time.Second: "second"}[tryCap]),

		// When a lease is given up.
		fact("the loss bound's formula", "session.LossDeadline, GivenUpAfter", `\*S\* − \*T\*/(\d+) − \*T\*/(\d+) \+ \*T\* − \*M\*`, boundHome, proofDiv, tickDiv),
		fact("the proven moment", "session.PingDelayDivisor", `\*s\* − interval − \*T\*/(\d+)`, lossHome, tickDiv),
		fact("the default loss margin", "session.LossMargin", `default \*T\*/(\d+)`, lossHome, marginDiv),
		fact("the default loss margin, in words", "session.LossMargin", `default: a (\w+) of the negotiated session timeout`, boundHome, ordinal(marginDiv)),
		fact("the loss bound with the default margin", "session.GivenUpAfter", `(\d+)% of (?:the session timeout|\*T\*) after the last proof was sent`, lossHome, lossPct),
		fact("the loss bound with the default margin, in the godoc", "session.GivenUpAfter", `leases outlive (\d+)% of the timeout without an answer`, boundHome, lossPct),
		fact("when a cut-off holder is told", "session.GivenUpAfter, ProofInterval", `between (\d+)% and (\d+)% of the session timeout after the cut`, boundHome, quietPct, lossPct),
		fact("when a cut-off holder is told, with the default timeout", "DefaultSessionTimeout", `with the default `+dur+` timeout, between `+dur+` and `+dur, boundHome,
			T, givenUp(T)-interval, givenUp(T)),
		fact("the silence that costs no lease", "session.GivenUpAfter, ProofInterval", `silence shorter than (\d+)% of the session timeout never costs a lease`, boundHome, quietPct),
		fact("the largest useful loss margin", "session.GivenUpAfter", `A margin above (\d+)% of the session timeout leaves no time`, boundHome, noTimePct),
		fact("the sync interval", "session.ProofInterval", `sync(?: through the leader)? every (\w+) of the (?:session )?timeout`, lossHome, ordinal(proofDiv)),
		fact("the sync interval's floor", "session.ProofInterval", `tenth of the session timeout \(at least every `+dur+`\)`, boundHome, session.ProofInterval(time.Millisecond)),
		fact("the sync interval, as a fraction", "session.ProofInterval", `sends a \x60sync\x60 every \*T\*/(\d+)`, lossHome, proofDiv),

		// The leaderless gap.
		fact("the leaderless gap", "LeaderGapBound", `within \*\*the session timeout \+ tickTime \+ `+dur+`\*\* of the old one's death, plus \*\*tickTime/(\d+)\*\* on an ensemble`, boundHome,
			leaderGapSlack, int(1/leaderGapFollowerTicks)),
		fact("the leaderless gap with the defaults", "LeaderGapBound, DefaultSessionTimeout", `zklock's `+dur+` session timeout: `+dur+` on a single server, `+dur+` on an ensemble`, boundHome,
			T, gap(T, 2*time.Second, false), gap(T, 2*time.Second, true)),
		fact("the leaderless gap with a 4 s session", "LeaderGapBound", `With a 4 s session \(the least \x60tickTime\x60 2 s allows\): `+dur+` and `+dur, boundHome,
			gap(4*time.Second, 2*time.Second, false), gap(4*time.Second, 2*time.Second, true)),
		fact("the leaderless gap at tickTime 500 ms", "LeaderGapBound", `with \x60tickTime\x60 500 ms a 2 s session gives a new leader within `+dur+` \(`+dur+` on an ensemble\)`, boundHome,
			gap(2*time.Second, 500*time.Millisecond, false), gap(2*time.Second, 500*time.Millisecond, true)),
		{Name: "the old leaderless gap", Quote: regexp.MustCompile(`(?:new leader|leader is elected)[^.]{0,60}(?:session )?timeout \+ 1 s`),
			Gone: "the old bound; ZooKeeper's tick adds up to a tickTime (link to docs/guarantees.md#the-leaderless-gap)"},
		{Name: "the old loss statement", Quote: regexp.MustCompile(`up \S+ s after it was last heard|the session timeout minus the loss margin`),
			Gone: "leases are given up the loss margin before ZooKeeper could expire the session, counted from the leader's proof (link to docs/guarantees.md#when-a-lease-is-given-up)"},

		// Defaults.
		fact("the default session timeout", "DefaultSessionTimeout", `(?:zklock's|the default|WithSessionTimeout sets the session timeout asked of ZooKeeper \(default) `+dur, nil, T),
		fact("the default node watch delay", "DefaultNodeWatchDelay", `(?:held |\x60WithNodeWatchDelay\x60 \(|WithNodeWatchDelay \(|node \(default )`+dur+`(?: \(\x60WithNodeWatchDelay\x60\)| by default|\))`, nil, DefaultNodeWatchDelay),
	}
}

// ordinal names the fraction 1/n as the pages write it: "third", "tenth".
func ordinal(n int) string {
	words := map[int]string{2: "half", 3: "third", 4: "quarter", 5: "fifth", 10: "tenth"}
	if w, ok := words[n]; ok {
		return w
	}
	return strings.TrimSpace(fmt.Sprintf("1/%d", n))
}
