package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

// Missing peers: skipped, saying so with the install command, by default;
// a failed run with ErrPeerMissing when required.
func TestIntegration_PeersMissing(t *testing.T) {
	ctx, _ := testHarness(t)
	gone := []Peer{curatorPeer(t.TempDir()), kazooPeer("/nonexistent/python3")}
	cfg := Config{Servers: []string{zktest.Shared().Addr()}, Rounds: 1, Root: zktest.UniqueRoot(t),
		Sizes: Sizes{Uncontended: 5}, Only: []string{"uncontended"}, peerList: gone}

	cfg.Peers = PeersRequired
	_, err := Run(ctx, cfg)
	if !errors.Is(err, ErrPeerMissing) || !strings.Contains(err.Error(), PeersInstall) {
		t.Errorf("required and missing: %v; want ErrPeerMissing with %q", err, PeersInstall)
	}

	cfg.Peers = PeersAuto
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Peers) != 2 || len(rep.Scenarios) != 1 || len(rep.Scenarios[0].Peers) != 0 {
		t.Fatalf("peers %+v, scenarios %+v", rep.Peers, rep.Scenarios)
	}
	for _, p := range rep.Peers {
		if !strings.Contains(p.Skipped, "not installed") || !strings.Contains(p.Skipped, PeersInstall) {
			t.Errorf("%s skipped: %q", p.Name, p.Skipped)
		}
	}
	if !strings.Contains(rep.Peers[0].Skipped, "curator-recipes.jar") || !strings.Contains(rep.Peers[1].Skipped, "/nonexistent/python3") {
		t.Errorf("skipped without naming what is missing: %+v", rep.Peers)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"against Apache Curator and kazoo: not measured", "Curator skipped: ", "kazoo skipped: ", "install with: " + PeersInstall} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}

	cfg.Peers = PeersOff
	if rep, err := Run(ctx, cfg); err != nil || len(rep.Peers) != 0 {
		t.Errorf("off: %+v, %v", rep.Peers, err)
	}
}
