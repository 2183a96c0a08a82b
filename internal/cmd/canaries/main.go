// Command canaries runs every canary of package internal/canary, one at a
// time, against the shortest check that should catch it (issue 32 §1): a
// focused test, a scenario of the model-based test, or the short fault
// campaign, built with the tag zklock_canary and ZKLOCK_CANARY naming the
// canary. A check catches its canary when it fails with the verdict that
// names the defect; a check that passes, or fails with another verdict,
// lets the canary survive, and the command then exits 1 (2 if a check
// could not run at all).
//
// It prints a Markdown table: the canary, the check, the verdict, how far
// the check got before the verdict (the model's step, the test's round,
// the campaign's acquisitions and time) and how long the check ran. The
// output of each check is kept in the -out directory. make canary runs it;
// docs/chaos.md ("Canaries") has the table of the latest runs.
//
//	go run ./internal/cmd/canaries [-only NAME,...] [-control] [-out DIR] [-list]
//
// -control first runs each check with the tag and no canary, which must
// pass: a check that fails on sound code proves nothing about its canary.
// Run it from the module's root.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/canary"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("canaries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("only", "", "run only these canaries (comma-separated names)")
	control := fs.Bool("control", false, "first run each check with no canary on: it must pass")
	out := fs.String("out", "", "`DIR` for the checks' output (default: a new temporary directory, kept)")
	list := fs.Bool("list", false, "list the canaries and their checks, and run nothing")
	with := fs.String("with", "", "run each canary against another check than its own: campaign (the short campaign, caught by any verdict that fails it) or model (the model-based test's random sequences: 3 seeds of 60 steps)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	selected, err := selectChecks(*only)
	if err == nil && *with != "" {
		selected, err = instead(selected, *with)
	}
	if err != nil {
		fmt.Fprintln(stderr, "canaries:", err)
		return 2
	}
	if *list {
		for _, c := range selected {
			fmt.Fprintf(stdout, "%-26s %s\n", c.canary, c.name)
		}
		return 0
	}
	if _, err := os.Stat("go.mod"); err != nil {
		fmt.Fprintln(stderr, "canaries: run me from the module's root (make canary)")
		return 2
	}
	dir := *out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "zklock-canaries-"); err != nil {
			fmt.Fprintln(stderr, "canaries:", err)
			return 2
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, "canaries:", err)
		return 2
	}
	var results []result
	for i, c := range selected {
		if *control {
			r := c.exec(dir, fmt.Sprintf("%02d-control", i), "")
			fmt.Fprintf(stderr, "control %-26s %-55s %s (%s)\n", c.canary, c.name, r.status, r.took.Round(time.Second))
			if r.status != passed {
				r.status = controlFailed
				results = append(results, r)
				continue
			}
		}
		r := c.exec(dir, fmt.Sprintf("%02d", i), c.canary)
		fmt.Fprintf(stderr, "canary  %-26s %-55s %s (%s)\n", c.canary, c.name, r.status, r.took.Round(time.Second))
		results = append(results, r)
	}
	writeTable(stdout, results)
	fmt.Fprintf(stdout, "\noutput of each check in %s\n", dir)
	code := 0
	for _, r := range results {
		switch r.status {
		case caught:
		case errored, controlFailed:
			code = max(code, 2)
		default:
			code = max(code, 1)
		}
	}
	if code == 1 {
		fmt.Fprintln(stdout, "SURVIVED: a canary no check caught is a hole in the checks: close it (docs/chaos.md, \"Canaries\")")
	}
	return code
}

// instead returns, for each canary of cs, the check with names instead
// of its own.
func instead(cs []check, with string) ([]check, error) {
	var out []check
	for _, c := range cs {
		if slices.ContainsFunc(out, func(o check) bool { return o.canary == c.canary }) {
			continue
		}
		switch with {
		case "campaign":
			out = append(out, check{canary: c.canary, name: "short campaign", campaign: true})
		case "model":
			out = append(out, check{canary: c.canary, name: "model test, 3 random sequences", pkg: "./zklock",
				run: "^TestIntegration_Model$", verdict: modelVerdict})
		default:
			return nil, fmt.Errorf("-with %q: want campaign or model", with)
		}
	}
	return out, nil
}

// selectChecks returns the checks of the canaries named in only (all
// when it is empty), refusing a name that is no canary's.
func selectChecks(only string) ([]check, error) {
	if only == "" {
		return checks, nil
	}
	var out []check
	for _, n := range strings.Split(only, ",") {
		name := canary.Name(strings.TrimSpace(n))
		if !canary.Known(name) {
			return nil, fmt.Errorf("no canary %q; known: %v", name, canary.All)
		}
		for _, c := range checks {
			if c.canary == name && !slices.ContainsFunc(out, func(o check) bool { return o.name == c.name && o.canary == name }) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
