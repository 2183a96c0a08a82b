package adaptertest

import (
	"context"
	"log/slog"
	"sync"
)

// Record is one logged line: its level, message and attributes (values as
// text).
type Record struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Log keeps what is logged to its Logger.
type Log struct {
	mu      sync.Mutex
	records []Record
}

// Logger returns a logger that writes to l, at every level.
func (l *Log) Logger() *slog.Logger { return slog.New(logHandler{l}) }

// Records returns what was logged so far.
func (l *Log) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.records...)
}

type logHandler struct{ l *Log }

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.l.mu.Lock()
	h.l.records = append(h.l.records, rec)
	h.l.mu.Unlock()
	return nil
}

func (h logHandler) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h logHandler) WithGroup(string) slog.Handler { return h }
