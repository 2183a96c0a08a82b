package main

import (
	"regexp"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// check is one run that must catch a canary: a go test of a package, or
// the fault campaign. It catches the canary when it fails with verdict.
type check struct {
	canary canary.Name
	// name is the check as the table shows it.
	name string
	// pkg and run: a go test of pkg, of the tests run matches.
	pkg, run string
	// campaign: the short fault campaign instead; verdict is then matched
	// against each violation's kind and detail in its JSON report.
	campaign bool
	// verdict is the failure that names the defect; nil for a campaign
	// that any verdict failing it catches (-with campaign).
	verdict *regexp.Regexp
}

// modelVerdict is any failure of the model-based test on ZooKeeper (the
// canaries are all in the ZooKeeper backend).
var modelVerdict = regexp.MustCompile(`model-based test failed on zookeeper: `)

// checks lists, for each canary, the shortest check that should catch it
// (issue 32 §1): a focused test, the model-based test's scenarios, or the
// short campaign. A canary with two hooks (the store's in the campaign
// and package fence's) has a check for each.
var checks = []check{{
	canary:  canary.RequeueNoWatch,
	name:    "model scenario item0-requeued-waiter-loses-its-lease",
	pkg:     "./zklock",
	run:     "^TestIntegration_ModelScenarios$/^item0-requeued-waiter-loses-its-lease$",
	verdict: regexp.MustCompile(`model-based test failed on zookeeper: step \d+: op\d+'s lease .* is still held, the model says it is lost \(node_deleted\)`),
}, {
	canary:  canary.LostCreateNoSync,
	name:    "TestIntegration_LostCreateCommittedLateIsNotQueuedTwice",
	pkg:     "./zklock",
	run:     "^TestIntegration_LostCreateCommittedLateIsNotQueuedTwice$",
	verdict: regexp.MustCompile(`round \d+: the queue holds [3-9] nodes, want the holder's and the waiter's`),
}, {
	canary:  canary.DowngradeLost,
	name:    "TestIntegration_DowngradeLostWhileReleasingTheWriteLease",
	pkg:     "./zklock",
	run:     "^TestIntegration_DowngradeLostWhileReleasingTheWriteLease$",
	verdict: regexp.MustCompile(`Downgrade returned a read lease .* whose Err is .*lost.*; want an error matching ErrLeaseLost`),
}, {
	canary:  canary.NoLossMargin,
	name:    "TestIntegration_LossToldAtTheDeadline",
	pkg:     "./zklock",
	run:     "^TestIntegration_LossToldAtTheDeadline$",
	verdict: regexp.MustCompile(`round \d+: the holder was told .* after the cut; want within .*: the lease outlived its loss margin`),
}, {
	canary:  canary.OldSessionGrant,
	name:    "model scenario holder-session-expires",
	pkg:     "./zklock",
	run:     "^TestIntegration_ModelScenarios$/^holder-session-expires$",
	verdict: regexp.MustCompile(`model-based test failed on zookeeper: step \d+: op\d+'s lease .* is still held, the model says it is lost \(session_expired\)`),
}, {
	canary:  canary.SemaphoreNAhead,
	name:    "model scenario item1-semaphore-second-holder-leaves",
	pkg:     "./zklock",
	run:     "^TestIntegration_ModelScenarios$/^item1-semaphore-second-holder-leaves$",
	verdict: regexp.MustCompile(`model-based test failed on zookeeper: step \d+: op\d+ may hold \[s\], and has not returned`),
}, {
	canary:  canary.TryUnbounded,
	name:    "TestIntegration_TryIsBoundedWhileZooKeeperIsAway",
	pkg:     "./zklock",
	run:     "^TestIntegration_TryIsBoundedWhileZooKeeperIsAway$",
	verdict: regexp.MustCompile(`answered after .*, when its caller's context ended .*: the try has no bound of its own`),
}, {
	canary:   canary.StoreAcceptsAnyToken,
	name:     "short campaign (store in memory)",
	campaign: true,
	verdict:  regexp.MustCompile(`^stale-write-committed: `),
}, {
	canary:  canary.StoreAcceptsAnyToken,
	name:    "fence TestGuard (PostgreSQL, SQLite)",
	pkg:     "./fence",
	run:     "^TestGuard$",
	verdict: regexp.MustCompile(`token \d+: <nil> \(<nil>\), want a \*StaleError`),
}, {
	canary:  canary.DivergedListingTrusted,
	name:    "model scenario diverged-listing-grants-nothing",
	pkg:     "./zklock",
	run:     "^TestIntegration_ModelScenarios$/^diverged-listing-grants-nothing$",
	verdict: regexp.MustCompile(`model-based test failed on zookeeper: step \d+: op\d+ holds .*, granted on a diverged server's listing`),
}, {
	canary:  canary.SemaphorePastOtherKinds,
	name:    "model scenario semaphore-behind-another-mode",
	pkg:     "./zklock",
	run:     "^TestIntegration_ModelScenarios$/^semaphore-behind-another-mode$",
	verdict: regexp.MustCompile(`model-based test failed on zookeeper: step \d+: SAFETY: \d+ leases hold s at once`),
}}
