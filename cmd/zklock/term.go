package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is an *os.File open on a terminal (not
// merely a character device such as /dev/null).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && file != nil && term.IsTerminal(int(file.Fd()))
}
