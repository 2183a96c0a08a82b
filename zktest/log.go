package zktest

import (
	"bytes"
	"io"
	"sync"
)

// syncWriter serializes writes from several servers to one writer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// tailBuffer keeps the end of a server's output for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 64 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
}

// lastLines returns at most n final lines of the output.
func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimRight(t.buf, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// logWriter copies server output to the configured log and the tail.
// Errors from the log are ignored so the JVM never blocks on its output.
type logWriter struct {
	out  io.Writer
	tail *tailBuffer
}

func (l logWriter) Write(p []byte) (int, error) {
	_, _ = l.out.Write(p)
	return l.tail.Write(p)
}

// logTimeArgs make slf4j-simple, ZooKeeper's logger here, stamp each line
// of the server's log with its time (to the millisecond, with the zone),
// so that the log can be laid beside a test's or a campaign's history.
var logTimeArgs = []string{
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=" + logTimeJava,
}

// logTimeJava and LogTimeLayout are the stamp's format, in Java's
// notation and in Go's.
const (
	logTimeJava   = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
	LogTimeLayout = "2006-01-02T15:04:05.000Z07:00"
)
