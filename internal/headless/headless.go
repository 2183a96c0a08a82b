// Package headless runs Debian's Chromium headless for the tests that
// look at a page as a person would: the debug page's DOM and screenshot,
// and Prometheus's graphs of the dashboard's queries.
//
// Chromium must be installed (apt-get install -y chromium, the
// "chromium" component of scripts/ensure-test-deps.sh). It runs with the
// flags a closed machine needs (no sandbox as root, no GPU, no
// background networking) and resolves no host but 127.0.0.1, as on an
// air-gapped host, in a new empty profile.
package headless

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// ErrNotInstalled is returned when no Chromium is on PATH. Its message
// holds the install command.
var ErrNotInstalled = errors.New("headless: Chromium is not installed; install it with: apt-get update && apt-get install -y chromium")

// Chromium runs headless Chromium with args (a URL and what to do with
// it: --dump-dom, --screenshot=FILE, ...) for at most two minutes, and
// returns its stdout.
func Chromium(ctx context.Context, args ...string) ([]byte, error) {
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		return nil, ErrNotInstalled
	}
	profile, err := os.MkdirTemp("", "headless-chromium-")
	if err != nil {
		return nil, err
	}
	// Chromium's helper processes may still be writing when it exits:
	// remove the profile best-effort.
	defer func() { _ = os.RemoveAll(profile) }()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir=" + profile}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("chromium %q: %w\n%s", args, err, stderr.String())
	}
	return stdout.Bytes(), nil
}
