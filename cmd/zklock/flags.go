package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/zklockkit/zklockkit/internal/duration"
)

// command is one subcommand of zklock.
type command struct {
	name    string
	args    string // after "zklock NAME [flags]" in the usage line
	summary string // one line, for "zklock help"
	help    string // the manual, after the usage line
	// interspersed lets flags follow positional arguments (not for run,
	// whose arguments after the first belong to CMD).
	interspersed bool
	// setup registers the subcommand's own flags and returns the function
	// that runs it with the positional arguments.
	setup func(fs *flag.FlagSet, cf *connFlags) func(e *env, args []string) error
}

// errHelp is returned by parse when -h or --help was given.
var errHelp = errors.New("help requested")

// newFlagSet returns a silent flag set: parse errors are reported in one
// line by Main, help goes to stdout.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses args into fs and returns the positional arguments.
// With interspersed, flags may appear after positional arguments; "--"
// ends the flags either way.
func parseArgs(fs *flag.FlagSet, args []string, interspersed bool) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, flagError(fs, err)
		}
		rest := fs.Args()
		if !interspersed || len(rest) == 0 {
			return append(pos, rest...), nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError is err, the flag package's error for a bad flag, or for a bad
// duration the flag's own message (`bad --wait "5": missing unit, did you
// mean 5s? ...`) without the flag package's words before it.
func flagError(fs *flag.FlagSet, err error) error {
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(*duration.Value); ok && v.Err() != nil {
			err = v.Err()
		}
	})
	return err
}

// printUsage writes the manual of c with its flags to w.
func printUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: zklock %s [flags] %s\n\n", c.name, c.args)
	fmt.Fprintln(w, strings.TrimSpace(c.help))
	fmt.Fprintln(w, "\nFlags (write them -flag or --flag):")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// inherit copies onto sub the values of flags set on top (the flags given
// before the subcommand) that sub did not set itself.
func inherit(top, sub *flag.FlagSet) error {
	seen := map[string]bool{}
	sub.Visit(func(f *flag.Flag) { seen[f.Name] = true })
	var err error
	top.Visit(func(f *flag.Flag) {
		if !seen[f.Name] && err == nil && sub.Lookup(f.Name) != nil {
			err = sub.Set(f.Name, f.Value.String())
		}
	})
	return err
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
