// Package codegen is the library behind zklockgen, the go generate tool
// that wraps functions and methods marked with a //zklock: directive in
// ZooKeeper locks: the generated code acquires the resources the directive
// names (through a [zklock.Locker], under the caller's context), calls the
// marked function with the lease's context, and releases.
//
// # Quick start
//
// Add the library and, as a tool, the generator to the module, once:
//
//	go get github.com/zklockkit/zklockkit/zklock
//	go get -tool github.com/zklockkit/zklockkit/codegen/cmd/zklockgen
//
// The second line records zklockgen with a tool directive in go.mod and
// its dependencies in go.mod and go.sum, at the version of zklockkit the
// module requires, so the generator and the library the generated code
// calls always match. Then mark the methods, and add the //go:generate
// line to one file of the package:
//
//	//go:generate go tool zklockgen
//
//	type Accounts struct{ db *sql.DB }
//
//	//zklock:resource=accounts/{id}
//	func (a *Accounts) Withdraw(ctx context.Context, id string, amount int64) error { ... }
//
//	//zklock:resource=accounts/{t.From} resource=accounts/{t.To} wait=5s
//	func (a *Accounts) Transfer(ctx context.Context, t Transfer) error { ... }
//
// Run go generate ./... and use the generated wrapper:
//
//	c, err := zklock.Open(ctx, os.Getenv("ZKLOCK_SERVERS"))
//	...
//	accounts := NewLockedAccounts(&Accounts{db: db}, c)
//	err = accounts.Withdraw(ctx, "42", 100) // holds "accounts/42" while Accounts.Withdraw runs
//
// go run github.com/zklockkit/zklockkit/codegen/cmd/zklockgen also works,
// but only once the module's go.sum holds the generator's own
// dependencies (golang.org/x/tools), which go get -tool records.
//
// # Directives
//
// A directive is a line comment starting with exactly "//zklock:" and a
// lower-case option name, with no space in between (it is then a Go
// directive, which gofmt keeps as it is and go/ast's CommentGroup.Text
// drops), in the doc comment of a function or method. All such lines of one doc comment make one
// directive. Its grammar:
//
//	directive   = "//zklock:" option { blank option } .
//	option      = "resource=" template | "mode=" mode | "wait=" duration | "try"
//	            | "limit=" count | "label=" text .
//	mode        = "exclusive" | "read" | "write" .
//	duration    = a positive time.ParseDuration string, such as 5s or 1m30s .
//	count       = a positive decimal integer .
//	template    = part { part } .
//	part        = literal | "{{" | "}}" | placeholder .
//	placeholder = "{" parameter { "." field } "}" .
//	blank       = a sequence of spaces or tabs .
//
// Templates are zklockkit's one resource language, the one the HTTP
// middleware and the gRPC interceptors read: a literal is any text without
// braces, blanks or control characters; "{{" and "}}" stand for literal
// braces; two placeholders must be separated by text containing "/". Part of an option may be written
// between double quotes to hold blanks (resource="user files/{id}"); there
// are no escapes between the quotes. Apart from resource=, an option may
// appear once.
//
//   - resource=TEMPLATE names a resource (see zklock.Client.Acquire).
//     Several resource= options make one multi-resource lock, acquired with
//     zklock.Locker.AcquireAll: all or nothing, in canonical order, so
//     callers naming the same resources in any order cannot deadlock. If
//     two templates yield the same name at run time (a transfer from an
//     account to itself), it is locked once, as every front end does.
//   - mode=exclusive (the default), mode=read or mode=write: zklock.Read or zklock.Write.
//   - limit=N: a semaphore of N holders (zklock.Limit); it excludes
//     mode=read and mode=write.
//   - label=TEXT: the lease's label in its owner data (zklock.LeaseLabel).
//   - wait=DURATION: zklock.MaxWait; the acquire fails with
//     zklock.ErrWaitTimeout when the lock is not held in time. A duration
//     has a unit: wait=5 is an error that suggests wait=5s (wait=250,
//     wait=250ms; wait=5sec, wait=5s).
//   - try: zklock.Try; the acquire fails at once with zklock.ErrLocked
//     when the lock is busy. try and wait= exclude each other.
//
// # Near misses
//
// A comment that looks like a directive but is not one would leave the
// method it marks unlocked, silently: gofmt turns "//zklock: resource=a"
// into "// zklock: resource=a", which Go no longer reads as a directive.
// So a comment line whose text, after the "//" or in a /* */ comment,
// reads
//
//	[blanks] zklock [blanks] ":" [blanks] options
//
// with "zklock" in any case, and that is not a directive, is an error
// that names what is wrong and gives the line to write:
//
//	./accounts.go:12:1: malformed //zklock: directive (space after "//"): write //zklock:resource=accounts/{id}
//
// This covers "// zklock:", "//zklock: resource=" (and "// zklock: ..."
// as gofmt writes it), "//ZKLOCK:", "//zklock :", a quote or an upper-case
// letter right after the colon ("//zklock:Resource="), a directive in a
// /* */ comment, and "//zklock:" followed by anything but an option name.
// Options here means: nothing, "try", a word NAME=..., or an option name
// alone, so that prose such as "// zklock: the caller holds the lock" is
// not reported. Where the line is does not matter: a near miss on a type,
// a field, in a body or after a declaration is reported the same way.
// Only lines that start with the word count; a directive quoted in text
// or commented out ("// //zklock:resource=a") is not a near miss.
//
// A name one edit away from zklock (a letter added, dropped, replaced, or
// two swapped: //zklok:, //zlock:, //zkloc:, //zklocks:, // zk-lock:)
// followed by options is a warning:
//
//	./jobs.go:7:1: warning: possible misspelled //zklock: directive ("zklok"): write //zklock:resource=jobs/{id} if it is meant to lock
//
// zklockgen prints warnings and goes on; with -strict they are errors.
// The library, without WithWarnings, treats them as errors.
//
// # Placeholders
//
// A placeholder is a parameter of the marked function, by name, optionally
// followed by field selectors: {id}, {t.From}, {req.Account.ID}. Fields are
// selected as in Go, through pointers and embedded structs; a nil pointer
// on the way panics, as the Go expression would. Only fields the package
// can see are allowed, and methods are not. The value is formatted by the
// first rule that applies:
//
//  1. a type with a String() string method (fmt.Stringer), including
//     through a pointer receiver: its String();
//  2. a string type: the string as it is (a named string type is converted);
//  3. an integer type: decimal, with strconv.FormatInt or FormatUint.
//
// Any other type (floats, booleans, slices, structs, interfaces without
// String...) is an error: format it yourself into a string parameter.
//
// The formatted value is escaped as every zklockkit front end escapes it:
// "/" is written %2F and "%" %25, so distinct values name distinct
// resources and the same key locks the same znode through the HTTP
// middleware, the gRPC interceptors and generated code. An empty value
// fails the call with a *zklock.ResourceError (zklock.ErrInvalidResource)
// before anything is locked; the generated file holds the small helper
// that escapes and checks.
//
// # What is generated
//
// For every receiver type T with marked methods, a wrapper
//
//	type LockedT struct {
//		*T
//		locker zklock.Locker
//	}
//
//	func NewLockedT(inner *T, locker zklock.Locker) *LockedT
//
// whose marked methods hold the locks and call those of *T, and whose
// other methods are promoted from *T unchanged. The wrapper's methods have
// value receivers, so both LockedT and *LockedT satisfy every interface
// that T or *T satisfies. An unexported type t gives lockedT and
// newLockedT. NewLockedT panics if inner or locker is nil.
//
// For a marked package-level function F, a function LockedF with the
// locker as its second parameter:
//
//	func LockedF(ctx context.Context, locker zklock.Locker, ...F's other parameters) (F's results)
//
// Each generated function acquires the resources with the caller's
// context, calls the marked one with lease.Context(ctx), so that it stops
// when the lock is lost and nested acquires re-enter (see below), then
// releases the lease with the caller's context: if that context has ended,
// the release goes on in the background (see zklock.Lease.Release) and
// is not reported, since the work is done. The results are those of the
// marked function, except that an acquire failure is returned as is (the
// marked function is then not called) and that, if the marked function
// succeeds while the lease was lost meanwhile, the loss is returned (an
// error matching zklock.ErrLeaseLost).
//
// Parameter names are kept, except blank or unnamed parameters and names
// that would hide an identifier the generated body uses, which are
// renamed. Imports are renamed when the package declares their name.
//
// # Nested calls
//
// The lease's context carries the lease: a wrapped method that calls
// another wrapped method on the same resource, through the same Locker and
// with the context it was given, re-enters the lock instead of
// deadlocking (see zklock.Lease.Context). For that the inner call must go
// through the wrapper (keep a *LockedT in T, for instance). A
// multi-resource acquire never re-enters; a single-resource acquire inside
// a multi-resource lease that holds that resource does.
//
// # Output
//
// One file per package: zklock_gen.go in the package's directory, or
// <type>_zklock.go after the first name given to -type, or the -output
// file. It starts with the line
//
//	// Code generated by zklockgen. DO NOT EDIT.
//
// is gofmt'd and depends only on the package's source: wrappers are sorted
// by type name, methods and functions by name. Files that start with that
// line are read as empty while loading the package, so a stale or broken
// wrapper neither stops the generator nor shapes its output; a file at the
// output path that lacks that line is never overwritten. Test files
// (_test.go) are not read.
//
// # The zklockgen command
//
//	zklockgen [-type T,F] [-output file] [-tags list] [-check] [-strict] [package ...]
//
// The packages default to "." (go generate runs the command in the
// directory of the file holding the //go:generate line). -type restricts
// generation to the named receiver types and package-level functions.
// -strict makes warnings errors (see Near misses). -check writes nothing
// and exits 1 when a file is missing or differs from what would be
// generated, for CI; CI can also run
//
//	go generate ./... && git diff --exit-code
//
// # Errors
//
// Problems are reported like the Go compiler does, one a line as
// "file:line:col: message" ("file:line:col: warning: message" for a
// warning), and the command exits 1 when there is an error. Each of these
// is an error, at the position of the offending text:
//
//   - a malformed option (unknown name, missing or bad value, an option
//     other than resource= given twice, a resource= template given twice,
//     try with wait=, limit= with mode=read or mode=write), a bad template
//     (empty, unbalanced braces, an empty or malformed placeholder, two
//     placeholders not separated by "/", a control character);
//   - a directive without resource=;
//   - a placeholder naming no parameter, a field that does not exist, is
//     not exported from another package or is a method, or a value that
//     cannot be formatted (see Placeholders);
//   - a marked function or method whose first parameter is not a
//     context.Context, or whose last result is not an error;
//   - a generic receiver type or a generic function (not supported);
//   - a directive that is not in the doc comment of a function or method
//     (on a type, a variable, a field, inside a body, or apart);
//   - a comment that looks like a directive and is not one, and, with
//     -strict, one whose name is one edit away from zklock (see Near
//     misses);
//   - a generated name (LockedT, NewLockedT, LockedF) already declared in
//     the package, or a type T with a method named T, which the embedded
//     field would hide;
//   - a signature that does not type-check, with the compiler's message;
//   - a package without directives, or a -type name that selects nothing
//     ([ErrNoDirectives]).
//
// # Library
//
// [Generate] does the work of the command and returns the files (see
// [File.Write] and [File.Stale]); source problems come back as an
// [ErrorList] of [*Error], and warnings go to the [WithWarnings]
// function, or into the ErrorList without it.
//
// [zklock.Locker]: https://pkg.go.dev/github.com/zklockkit/zklockkit/zklock#Locker
package codegen
