package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// testLine is one line a go test printed, and when it printed it.
type testLine struct {
	text string
	at   time.Time
}

// testLog reads the events of go test -json: it writes the plain output
// to w, as go test without -json would print it, and keeps each line with
// its time, so that a verdict can be timed from the test's start rather
// than by the test's whole run (a test that goes on after its first
// error).
type testLog struct {
	w       io.Writer
	partial []byte // an event's line not yet ended
	lines   []testLine
	started time.Time // when the first test began to run
}

// Write takes go test -json's output, a line per event.
func (l *testLog) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.event(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
}

// Close takes an event left without its newline.
func (l *testLog) Close() error {
	if len(l.partial) > 0 {
		l.event(l.partial)
		l.partial = nil
	}
	return nil
}

func (l *testLog) event(b []byte) {
	var e struct {
		Time   time.Time
		Action string
		Output string
	}
	if json.Unmarshal(b, &e) != nil || e.Action == "" {
		l.add(string(b)+"\n", time.Now()) // not an event: go test's own text
		return
	}
	switch e.Action {
	case "run":
		if l.started.IsZero() {
			l.started = e.Time
		}
	case "output", "build-output":
		l.add(e.Output, e.Time)
	}
}

func (l *testLog) add(out string, at time.Time) {
	_, _ = io.WriteString(l.w, out)
	for line := range strings.Lines(out) {
		l.lines = append(l.lines, testLine{strings.TrimSuffix(line, "\n"), at})
	}
}
