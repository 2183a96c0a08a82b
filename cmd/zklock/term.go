package main

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is an *os.File open on a terminal (not
// merely a character device such as /dev/null).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && file != nil && term.IsTerminal(int(file.Fd()))
}

// clearScreen starts each frame of a live view, as xterm, tmux and the
// Linux console understand it.
const clearScreen = "\x1b[H\x1b[2J" // cursor home, erase the screen

// drawFrame writes one frame of a live view in one write: clearScreen,
// then body. In raw mode (crlf) the terminal no longer turns "\n" into
// "\r\n", so drawFrame does.
func drawFrame(w io.Writer, body []byte, crlf bool) {
	if crlf {
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
	}
	_, _ = w.Write(append([]byte(clearScreen), body...))
}
