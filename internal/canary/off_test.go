//go:build !zklock_canary

package canary_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/internal/canary"
)

// Without the tag zklock_canary no canary is on, whatever ZKLOCK_CANARY
// says.
func TestNoCanaryOnWithoutTheTag(t *testing.T) {
	if canary.Built {
		t.Fatal("Built is true in a build without the tag")
	}
	for _, n := range canary.All {
		t.Setenv(canary.EnvVar, string(n))
		for _, m := range canary.All {
			if canary.On(m) {
				t.Errorf("%s=%s: On(%s) is true without the tag", canary.EnvVar, n, m)
			}
		}
	}
}
