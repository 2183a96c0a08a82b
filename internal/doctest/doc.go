// Package doctest keeps the manual honest: README.md and docs/*.md are
// read by tests that fail when a page and the code disagree. It holds what
// those tests share; the tests themselves sit beside the code whose facts
// they check (this package's tests for what other packages export, the
// zklock package's own for its unexported bounds).
//
// # Go on the pages
//
// Every ```go block of README.md and docs/*.md must compile
// (TestDocSnippetsCompile). A block that starts with a package clause is a
// whole file. Any other block is a fragment, compiled inside a wrapper:
// testdata/wrappers/NAME.go.tmpl, Go source in which the fragment replaces
// the line "//snippet" (statements, declarations) or the comment
// "/*snippet*/" (an expression). The wrapper is named by an HTML comment
// on the line before the fence, invisible on the rendered page:
//
//	<!-- go: echo -->
//	```go
//	e.POST("/accounts/:id/withdraw", withdraw, zkecho.Lock(client, zkecho.Try()))
//	```
//
// Without a comment the wrapper is "body": statements in a function of ctx
// returning error, with the names the manual uses without declaring them
// (c and client, a *zklock.Client; lease; db; mux; work, ...) declared
// around it. What the compiler needs and a reader does not is taken care
// of: the fragment's import lines move to the wrapper's imports; "..."
// stands for code left out (not after a name, ")" or "]", where Go means
// a variadic argument); a function whose body is "{ ... }" panics; a
// variable or import a fragment declares and does not use is no error.
//
// A table may hold Go too: an HTML comment before it names a wrapper per
// column, by number from 1, and every `code span` in that column's cells
// compiles in the wrapper on its own:
//
//	<!-- go-table: 2=rule-field|config-field 3=method-option -->
//
// Wrappers separated by "|" are alternatives: a span compiles in one of
// them.
//
// # Numbers on the pages
//
// A Fact is a value the pages quote (a bound, a default, a status or exit
// code, a name) and the value the code computes for it, with a regular
// expression that finds every quote. Check reports each quote whose value
// differs from the code's, each quote outside the pages allowed to state
// the fact (a bound is stated once, in docs/guarantees.md, and linked to
// from elsewhere), and a fact no page quotes any more (so that a reworded
// sentence does not silently escape its check).
package doctest
