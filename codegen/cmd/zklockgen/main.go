// Command zklockgen generates wrappers that hold ZooKeeper locks around the
// functions and methods marked with //zklock: directives. Add it to the
// module's tools:
//
//	go get -tool github.com/zklockkit/zklockkit/codegen/cmd/zklockgen
//
// and put this line in a file of the package:
//
//	//go:generate go tool zklockgen
//
// Usage:
//
//	zklockgen [-type T,F] [-output file] [-tags list] [-check] [-strict] [package ...]
//
// The directive language, what is generated and the error messages are
// described in the documentation of package
// github.com/zklockkit/zklockkit/codegen.
//
// Warnings (a comment such as //zklok:resource=a that may be a misspelled
// directive) are printed to standard error and do not change the exit
// status, unless -strict makes them errors.
//
// Exit status: 0 on success, 1 for errors in the source or (with -check) a
// stale or missing generated file, 2 for bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zklockkit/zklockkit/codegen"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stderr))
}

// run is the command; it returns the exit status.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("zklockgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		typeNames = fs.String("type", "", "comma-separated `names` of receiver types and functions to generate for (default: every directive)")
		output    = fs.String("output", "", "output `file` (default: zklock_gen.go, or <type>_zklock.go with -type, in the package's directory)")
		tags      = fs.String("tags", "", "comma-separated build `tags` to load the package with")
		check     = fs.Bool("check", false, "write nothing; exit 1 if a generated file is missing or stale (for CI)")
		strict    = fs.Bool("strict", false, "treat warnings (comments that may be misspelled directives, such as //zklok:) as errors")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: zklockgen [flags] [package ...]\n\n")
		fmt.Fprintf(stderr, "zklockgen wraps functions and methods marked //zklock:resource=... with\n")
		fmt.Fprintf(stderr, "lock acquire and release. The package defaults to \".\"; see\n")
		fmt.Fprintf(stderr, "https://pkg.go.dev/github.com/zklockkit/zklockkit/codegen for the directives.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "zklockgen:", err)
		return 1
	}
	opts := []codegen.Option{codegen.WithDir(cwd)}
	if !*strict {
		opts = append(opts, codegen.WithWarnings(func(e *codegen.Error) {
			fmt.Fprintln(stderr, e.Relative(cwd))
		}))
	}
	if *typeNames != "" {
		opts = append(opts, codegen.WithTypes(*typeNames))
	}
	if *output != "" {
		if len(fs.Args()) > 1 {
			fmt.Fprintln(stderr, "zklockgen: -output can only be used with one package")
			fs.Usage()
			return 2
		}
		opts = append(opts, codegen.WithOutput(*output))
	}
	if *tags != "" {
		opts = append(opts, codegen.WithBuildFlags("-tags="+*tags))
	}
	files, err := codegen.Generate(ctx, fs.Args(), opts...)
	var list codegen.ErrorList
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			fmt.Fprintln(stderr, e.Relative(cwd))
		}
		return 1
	case err != nil:
		fmt.Fprintln(stderr, "zklockgen:", err)
		return 1
	}
	status := 0
	for _, f := range files {
		if !*check {
			if err := f.Write(); err != nil {
				fmt.Fprintln(stderr, "zklockgen:", err)
				status = 1
			}
			continue
		}
		stale, err := f.Stale()
		switch {
		case err != nil:
			fmt.Fprintln(stderr, "zklockgen:", err)
			status = 1
		case stale:
			fmt.Fprintf(stderr, "zklockgen: %s is stale or missing: run go generate\n", f.Rel(cwd))
			status = 1
		}
	}
	return status
}
