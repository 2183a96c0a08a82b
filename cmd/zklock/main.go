package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/zklockkit/zklockkit/internal/zkenv"
)

// env is what a subcommand runs with.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// dashed reports that "--" ended the subcommand's flags before its
	// first positional argument ("zklock run -- CMD": no RESOURCE there).
	dashed bool
}

// commands are zklock's subcommands, in the order help lists them. (The
// list is filled in by init: completion reads it.)
var commands []*command

func init() {
	commands = []*command{lsCommand, topCommand, showCommand, watchCommand, runCommand, breakCommand, completionCommand}
}

// commandNames is "ls, top, show, watch, run, break, completion", for
// messages.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// Main runs the zklock command line args (without the program name) and
// returns the process exit code (see ExitOK and the other Exit constants).
// Errors are reported on stderr in one line. "zklock run" starts its
// command with stdin, stdout and stderr, and handles the process's
// signals.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	name, err := e.main(args)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) || ee.err != nil {
		prefix := "zklock"
		if name != "" {
			prefix += " " + name
		}
		fmt.Fprintf(stderr, "%s: %s\n", prefix, errText(err))
	}
	return codeOf(err)
}

func (e *env) main(args []string) (string, error) {
	top := newFlagSet("zklock")
	var topConn connFlags
	topConn.register(top)
	version := top.Bool("version", false, "print zklock's version and exit")
	if _, err := parseArgs(top, args, false); err != nil {
		if errors.Is(err, errHelp) {
			printTopUsage(e.stdout)
			return "", nil
		}
		return "", usageErrorf("", "%v", err)
	}
	if *version {
		_, err := fmt.Fprintln(e.stdout, Version())
		return "", err
	}
	rest := top.Args()
	if len(rest) == 0 {
		return "", usageErrorf("", "no command given: one of %s", commandNames())
	}
	name := rest[0]
	if name == "help" {
		return e.help(rest[1:])
	}
	c := lookup(name)
	if c == nil {
		return "", usageErrorf("", "unknown command %q: one of %s", name, commandNames())
	}
	fs := newFlagSet("zklock " + name)
	var cf connFlags
	cf.register(fs)
	runFn := c.setup(fs, &cf)
	pos, err := parseArgs(fs, rest[1:], c.interspersed)
	if err == nil && !c.interspersed {
		// did "--" end the flags before the first positional argument?
		n := len(rest[1:]) - len(pos)
		e.dashed = n > 0 && rest[n] == "--"
	}
	if errors.Is(err, errHelp) {
		printUsage(e.stdout, c, fs)
		return name, nil
	}
	if err != nil {
		return name, usageErrorf(name, "%v", err)
	}
	if err := inherit(top, fs); err != nil {
		return name, usageErrorf(name, "%v", err)
	}
	return name, runFn(e, pos)
}

func (e *env) help(args []string) (string, error) {
	if len(args) == 0 {
		printTopUsage(e.stdout)
		return "", nil
	}
	c := lookup(args[0])
	if c == nil {
		return "help", usageErrorf("", "unknown command %q: one of %s", args[0], commandNames())
	}
	fs := newFlagSet("zklock " + c.name)
	var cf connFlags
	cf.register(fs)
	c.setup(fs, &cf)
	printUsage(e.stdout, c, fs)
	return "help", nil
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func printTopUsage(w io.Writer) {
	fmt.Fprint(w, `zklock shows who holds a ZooKeeper lock and who waits for it, and runs a
command while holding one (a distributed flock).

Usage: zklock [connection flags] COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintf(w, "  %s\n        %s\n", "help [COMMAND]", "this text, or the manual of COMMAND (also: zklock COMMAND --help)")
	fmt.Fprint(w, "\nConnection flags (every command takes them, before or after its name):\n")
	fs := newFlagSet("zklock")
	var cf connFlags
	cf.register(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, "\nOther flags:\n  -version\n    \tprint zklock's version and exit\n")
	fmt.Fprintf(w, `
Environment:
  %-16s connection string used when --servers is not given
  %-16s digest password used when --user is given without --password

`, zkenv.EnvServers, EnvPassword)
	fmt.Fprint(w, exitCodeTable)
}

// registerJSON adds the --json flag shared by ls and show.
func registerJSON(fs *flag.FlagSet) *bool {
	return fs.Bool("json", false, "print JSON instead of a table")
}

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
