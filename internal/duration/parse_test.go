package duration_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
)

func TestParseAcceptsWhatTimeAccepts(t *testing.T) {
	for _, s := range []string{"5s", "250ms", "1m30s", "-1s", "+2h", "0", "1.5h", "3µs", "10us"} {
		want, _ := time.ParseDuration(s)
		if got, err := duration.Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, reason, suggestion, msg string }{
		{"5", "missing unit", "5s", `bad duration "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)`},
		{"1.5", "missing unit", "1.5s", ""},
		{"99", "missing unit", "99s", ""},
		{"250", "missing unit", "250ms", ""},
		{"10000", "missing unit", "10000ms", ""},
		{"-5", "missing unit", "-5s", ""},
		{"1m30", "missing unit", "1m30s", ""},
		{"1h30", "missing unit", "1h30m", ""},
		{"5sec", `unknown unit "sec"`, "5s", `bad duration "5sec": unknown unit "sec", did you mean 5s? (units: ns, us, ms, s, m, h)`},
		{"5 seconds", `unknown unit "seconds"`, "5s", ""},
		{"2min", `unknown unit "min"`, "2m", ""},
		{"1h30min", `unknown unit "min"`, "1h30m", ""},
		{"3hrs", `unknown unit "hrs"`, "3h", ""},
		{"5S", `unknown unit "S"`, "5s", ""},
		{"10MS", `unknown unit "MS"`, "10ms", ""},
		{"500msec", `unknown unit "msec"`, "500ms", ""},
		{"2d", `unknown unit "d"`, "48h", ""},
		{"1.5d", `unknown unit "d"`, "", ""},
		{"5x", `unknown unit "x"`, "", `bad duration "5x": unknown unit "x" (units: ns, us, ms, s, m, h)`},
		{"5 s", `unexpected blank in "5 s"`, "5s", ""},
		{"abc", "want a number with a unit, such as 250ms, 5s or 1m30s", "", `bad duration "abc": want a number with a unit, such as 250ms, 5s or 1m30s`},
		{"", "want a number with a unit, such as 250ms, 5s or 1m30s", "", ""},
		{"--5s", "want a number with a unit, such as 250ms, 5s or 1m30s", "", ""},
		{"1..5s", "want a number with a unit, such as 250ms, 5s or 1m30s", "", ""},
		{"s", "want a number with a unit, such as 250ms, 5s or 1m30s", "", ""},
	} {
		_, err := duration.Parse(c.in)
		var e *duration.Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, want an *Error", c.in, err)
			continue
		}
		if e.Input != c.in || e.Reason != c.reason || e.Suggestion != c.suggestion {
			t.Errorf("Parse(%q): reason %q, suggestion %q; want %q, %q", c.in, e.Reason, e.Suggestion, c.reason, c.suggestion)
		}
		if c.msg != "" && err.Error() != c.msg {
			t.Errorf("Parse(%q) error:\n got %s\nwant %s", c.in, err, c.msg)
		}
	}
}

// Every suggestion parses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5", "1m30", "5sec", "2d", "abc", "1h30min"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := duration.Parse(s)
		want, werr := time.ParseDuration(s)
		if (err == nil) != (werr == nil) || d != want {
			t.Fatalf("Parse(%q) = %v, %v; time.ParseDuration: %v, %v", s, d, err, want, werr)
		}
		var e *duration.Error
		if errors.As(err, &e) && e.Suggestion != "" {
			if _, err := time.ParseDuration(e.Suggestion); err != nil {
				t.Fatalf("Parse(%q) suggests %q, which does not parse", s, e.Suggestion)
			}
		}
	})
}
