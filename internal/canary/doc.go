// Package canary seeds known defects into zklockkit, one at a time, so
// that a release run can show that the checks catch each of them: the
// fault campaign (cmd/zklock-chaos), the model-based test
// (zklock/model_*_test.go) and the focused tests (issue 32, "Canaries").
//
// A canary is a one-line branch in the code it breaks:
//
//	if canary.On(canary.RequeueNoWatch) {
//		// the defect, reintroduced
//	}
//
// Canaries exist only in a build with the tag zklock_canary. There, On
// reports whether the canary named by the environment variable
// ZKLOCK_CANARY is the one asked about (an unknown name stops the
// program). In every other build On is a function that returns false, so
// the compiler drops each canary branch: a release build cannot carry a
// canary, whatever its environment says (TestReleaseBuildCarriesNoCanary
// checks a binary).
//
// make canary (internal/cmd/canaries) runs each canary against the
// shortest check that should catch it; docs/chaos.md ("Canaries") has the
// table.
package canary
