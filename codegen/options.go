package codegen

import "strings"

// DefaultOutput is the name of the file written in each package's
// directory when neither WithOutput nor WithTypes is given.
const DefaultOutput = "zklock_gen.go"

// Option configures Generate. Options are applied in order over the
// documented defaults.
type Option func(*options)

type options struct {
	dir        string   // "": the current directory
	env        []string // nil: the current environment
	buildFlags []string
	types      []string // nil: every directive
	output     string   // "": per package, see outputName
	warn       func(*Error)
}

// WithDir sets the directory in which package patterns are resolved and
// relative output names are taken (default: the current directory, which
// go generate sets to the directory of the file holding the
// //go:generate line).
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// WithEnv sets the environment of the go command that loads packages
// (default: the current environment), e.g. to set GOFLAGS.
func WithEnv(env []string) Option { return func(o *options) { o.env = env } }

// WithBuildFlags passes flags to the go command that loads packages, such
// as "-tags=integration" (default: none).
func WithBuildFlags(flags ...string) Option {
	return func(o *options) { o.buildFlags = append(o.buildFlags, flags...) }
}

// WithTypes restricts generation to the wrappers of the named receiver
// types and to the named package-level functions (default: every
// directive of the package). A name that selects nothing is an error.
// Each name may also be a comma-separated list, as given to -type.
func WithTypes(names ...string) Option {
	return func(o *options) {
		for _, n := range names {
			for _, s := range strings.Split(n, ",") {
				if s = strings.TrimSpace(s); s != "" {
					o.types = append(o.types, s)
				}
			}
		}
	}
}

// WithOutput sets the file to write, relative to the WithDir directory
// (default: DefaultOutput in the package's directory, or
// "<type>_zklock.go" after the first WithTypes name). It can only be used
// when the patterns name one package.
func WithOutput(name string) Option { return func(o *options) { o.output = name } }

// outputBase returns the base name of the file written in a package's
// directory when no output is given.
func (o *options) outputBase() string {
	if len(o.types) > 0 {
		return strings.ToLower(o.types[0]) + "_zklock.go"
	}
	return DefaultOutput
}

// WithWarnings makes warnings (a comment such as //zklok:resource=a, one
// edit away from a //zklock: directive) reports instead of errors: Generate
// calls warn with each of them, Warning set, and goes on. Without this
// option a warning is an error, since Generate has nowhere else to report
// it; zklockgen passes one that prints to standard error unless -strict
// is given.
func WithWarnings(warn func(*Error)) Option { return func(o *options) { o.warn = warn } }
