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

// Control sequences of the live views (watch, top), as xterm, tmux and
// the Linux console understand them.
const (
	clearScreen = "\x1b[H\x1b[2J" // cursor home, erase the screen
	altScreen   = "\x1b[?1049h"   // switch to the alternate screen (what was there comes back on leaving)
	mainScreen  = "\x1b[?1049l"
	hideCursor  = "\x1b[?25l"
	showCursor  = "\x1b[?25h"
)

// drawFrame writes one frame of a live view in one write: clearScreen,
// then body. In raw mode (crlf) the terminal no longer turns "\n" into
// "\r\n", so drawFrame does.
func drawFrame(w io.Writer, body []byte, crlf bool) {
	if crlf {
		body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
	}
	_, _ = w.Write(append([]byte(clearScreen), body...))
}

// liveTerminal is a terminal taken over by a full-screen view: its own
// screen (the alternate one, so the shell's comes back on exit), no
// cursor, and, when stdin is the terminal too, raw input: each key
// arrives at once, unechoed, Ctrl-C included (as the byte 3: raw mode
// turns the terminal's signals off).
type liveTerminal struct {
	out   io.Writer
	fd    int
	state *term.State // nil when stdin is not a terminal
	keys  chan byte   // nil when stdin is not a terminal
}

// openLive takes over the terminal of out (and of in, when it is one).
// Call restore when done, on every path.
func openLive(in io.Reader, out io.Writer) (*liveTerminal, error) {
	l := &liveTerminal{out: out}
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		state, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return nil, err
		}
		l.fd, l.state = int(f.Fd()), state
		l.keys = make(chan byte, 16)
		go readKeys(f, l.keys)
	}
	_, _ = io.WriteString(out, altScreen+hideCursor)
	return l, nil
}

// readKeys sends the bytes read from f on keys, dropping what the view
// has no time for, until f fails; then it closes keys. (Its Read stays
// blocked after restore; the process is about to exit.)
func readKeys(f *os.File, keys chan<- byte) {
	defer close(keys)
	buf := make([]byte, 64)
	for {
		n, err := f.Read(buf)
		for _, b := range buf[:n] {
			select {
			case keys <- b:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// draw shows a frame.
func (l *liveTerminal) draw(body []byte) { drawFrame(l.out, body, l.state != nil) }

// size returns the terminal's rows and columns (24×80 when unknown).
func (l *liveTerminal) size() (rows, cols int) {
	if f, ok := l.out.(*os.File); ok {
		if c, r, err := term.GetSize(int(f.Fd())); err == nil && r > 0 && c > 0 {
			return r, c
		}
	}
	return 24, 80
}

// restore gives the terminal back as it was: input mode, cursor, screen.
func (l *liveTerminal) restore() {
	_, _ = io.WriteString(l.out, showCursor+mainScreen)
	if l.state != nil {
		_ = term.Restore(l.fd, l.state)
		l.state = nil
	}
}
