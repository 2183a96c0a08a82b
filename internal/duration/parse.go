package duration

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Units lists the units time.ParseDuration accepts, as the messages name
// them.
const Units = "ns, us, ms, s, m, h"

// Examples are the durations the messages give as examples.
const Examples = "250ms, 5s or 1m30s"

// Error reports a string that is not a duration.
type Error struct {
	Input string
	// Reason says what is wrong: "missing unit", `unknown unit "sec"`,
	// or that the text is not a number with a unit.
	Reason string
	// Suggestion is the duration the input most likely meant, such as
	// "5s" for "5", or "" when there is no good guess.
	Suggestion string
	// Flag is the name of the command-line flag the input was given to,
	// such as "wait", or "". With a name the message starts
	// `bad --wait "5"` instead of `bad duration "5"`.
	Flag string
}

// Error returns, for instance,
//
//	bad duration "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)
//
// or, when Flag is "wait",
//
//	bad --wait "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)
func (e *Error) Error() string {
	var b strings.Builder
	what := "duration"
	if e.Flag != "" {
		what = "--" + e.Flag
	}
	fmt.Fprintf(&b, "bad %s %q: %s", what, e.Input, e.Reason)
	if e.Suggestion != "" {
		fmt.Fprintf(&b, ", did you mean %s?", e.Suggestion)
	}
	if strings.HasPrefix(e.Reason, "unknown unit") {
		b.WriteString(" (units: " + Units + ")")
	} else if e.Reason == "missing unit" {
		b.WriteString(" (write a number with a unit: " + Examples + ")")
	}
	return b.String()
}

// Parse parses s as time.ParseDuration does. Its error is an *Error.
func Parse(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	return 0, explain(s)
}

// aliases maps units people write (lower-cased) to Go's, with the factor
// to apply to the number (days become hours).
var aliases = map[string]struct {
	unit   string
	factor int
}{
	"sec": {"s", 1}, "secs": {"s", 1}, "second": {"s", 1}, "seconds": {"s", 1},
	"min": {"m", 1}, "mins": {"m", 1}, "minute": {"m", 1}, "minutes": {"m", 1},
	"hr": {"h", 1}, "hrs": {"h", 1}, "hour": {"h", 1}, "hours": {"h", 1},
	"msec": {"ms", 1}, "msecs": {"ms", 1}, "milli": {"ms", 1}, "millis": {"ms", 1},
	"millisecond": {"ms", 1}, "milliseconds": {"ms", 1},
	"usec": {"us", 1}, "usecs": {"us", 1}, "microsecond": {"us", 1}, "microseconds": {"us", 1},
	"nsec": {"ns", 1}, "nsecs": {"ns", 1}, "nanosecond": {"ns", 1}, "nanoseconds": {"ns", 1},
	"d": {"h", 24}, "day": {"h", 24}, "days": {"h", 24},
}

// smaller is the unit that usually follows another in a compound
// duration: after 1m, a bare 30 means 30s.
var smaller = map[string]string{"h": "m", "m": "s", "s": "ms", "ms": "us", "us": "ns", "µs": "ns", "μs": "ns"}

// explain builds the error for a string time.ParseDuration refused.
func explain(s string) *Error {
	e := &Error{Input: s, Reason: "want a number with a unit, such as " + Examples}
	body := strings.TrimLeft(s, "+-")
	sign := s[:len(s)-len(body)]
	pairs := split(body)
	if len(pairs) == 0 || len(sign) > 1 {
		return e
	}
	fixed := sign
	prev := ""
	reason := ""
	for _, p := range pairs {
		num, unit, why := fix(p, prev)
		if reason == "" {
			reason = why
		}
		if unit == "" {
			break
		}
		fixed += num + unit
		prev = unit
	}
	if reason != "" {
		e.Reason = reason
	}
	if _, err := time.ParseDuration(fixed); err == nil && fixed != s {
		e.Suggestion = fixed
	}
	return e
}

// pair is a number and the unit written after it.
type pair struct{ num, unit string }

// split cuts body into number-unit pairs (1h30min: 1 h, 30 min), or
// returns nil when a number is not one.
func split(body string) []pair {
	digit := func(c byte) bool { return c >= '0' && c <= '9' || c == '.' }
	var pairs []pair
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && digit(body[j]) {
			j++
		}
		k := j
		for k < len(body) && !digit(body[k]) {
			k++
		}
		if _, err := strconv.ParseFloat(body[i:j], 64); err != nil {
			return nil
		}
		pairs = append(pairs, pair{body[i:j], body[j:k]})
		i = k
	}
	return pairs
}

// fix returns the pair with the unit it most likely meant (after the unit
// prev), and what was wrong with it; unit is "" when there is no guess.
func fix(p pair, prev string) (num, unit, why string) {
	u := strings.TrimSpace(p.unit)
	switch {
	case u == "" && prev == "":
		return p.num, guess(p.num), "missing unit"
	case u == "":
		return p.num, smaller[prev], "missing unit"
	case isUnit(u) && u == p.unit:
		return p.num, u, ""
	case isUnit(u):
		return p.num, u, fmt.Sprintf("unexpected blank in %q", p.num+p.unit)
	}
	why = fmt.Sprintf("unknown unit %q", u)
	if isUnit(strings.ToLower(u)) {
		return p.num, strings.ToLower(u), why
	}
	a, ok := aliases[strings.ToLower(u)]
	switch {
	case !ok:
		return p.num, "", why
	case a.factor == 1:
		return p.num, a.unit, why
	}
	n, err := strconv.Atoi(p.num)
	if err != nil {
		return p.num, "", why
	}
	return strconv.Itoa(n * a.factor), a.unit, why
}

func isUnit(u string) bool {
	switch u {
	case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		return true
	}
	return false
}

// guess returns the unit a bare number most likely lacks: seconds for
// small numbers (wait=5), milliseconds from 100 on (Java's
// sessionTimeout=10000 is in milliseconds).
func guess(num string) string {
	f, err := strconv.ParseFloat(num, 64)
	if err == nil && f >= 100 {
		return "ms"
	}
	return "s"
}
