package duration

import (
	"errors"
	"flag"
	"time"
)

// Value is a flag.Value holding a time.Duration. It accepts what
// time.ParseDuration accepts, like the flag package's own duration flags,
// but a value it refuses gets Parse's explanation and suggestion, naming
// the flag: `bad --wait "5": missing unit, did you mean 5s? ...`.
type Value struct {
	p    *time.Duration
	name string
	err  error
}

// Var defines a duration flag on fs with the given name, default value and
// usage string, as fs.DurationVar does, and returns its Value. As with the
// flag package's own flags, a `backquoted` word in usage names the flag's
// argument in the help text; write one (such as `duration`), since the
// flag package can only name the argument of its own types.
func Var(fs *flag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) *Value {
	*p = value
	v := &Value{p: p, name: name}
	fs.Var(v, name, usage)
	return v
}

// Set parses s with Parse. Its error is an *Error whose Flag is the
// flag's name.
func (v *Value) Set(s string) error {
	d, err := Parse(s)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Flag = v.name
		}
		v.err = err
		return err
	}
	*v.p, v.err = d, nil
	return nil
}

// String returns the duration as time.Duration.String does ("0s" for a
// Value that holds none, as the flag package expects of a zero Value).
func (v *Value) String() string {
	if v == nil || v.p == nil {
		return time.Duration(0).String()
	}
	return v.p.String()
}

// Get returns the time.Duration, for flag.Getter.
func (v *Value) Get() any { return *v.p }

// Err returns the error of the last Set, or nil when it succeeded. The
// flag package puts a Set error after words of its own ("invalid value
// "5" for flag -wait: "); a command that prints its own messages can
// report Err instead.
func (v *Value) Err() error { return v.err }
