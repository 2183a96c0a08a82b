package codegen

import (
	"cmp"
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNoDirectives is matched (errors.Is) by the error of a package that
// holds no //zklock: directive, or none that the WithTypes filter selects.
var ErrNoDirectives = errors.New("codegen: no //zklock: directives")

// Error is one problem found in the source, at a position, in the manner of
// the Go compiler.
type Error struct {
	Pos token.Position // Filename is absolute; invalid when unknown
	Msg string
	// Warning is set on the problems passed to the WithWarnings
	// function; their text says "warning: " before the message.
	Warning bool
	err     error // optional sentinel, for errors.Is
}

// Error returns "file:line:col: message", or the message alone when the
// position is unknown.
func (e *Error) Error() string {
	if !e.Pos.IsValid() && e.Pos.Filename == "" {
		return e.msg()
	}
	return e.Pos.String() + ": " + e.msg()
}

func (e *Error) msg() string {
	if e.Warning {
		return "warning: " + e.Msg
	}
	return e.Msg
}

// Unwrap returns the sentinel the error stands for, if any.
func (e *Error) Unwrap() error { return e.err }

// Relative returns the error's text with its file name made relative to
// dir when the file is under dir, the way the go command prints positions
// ("./accounts.go:12:3: ...").
func (e *Error) Relative(dir string) string {
	pos := e.Pos
	if pos.Filename != "" && dir != "" {
		if rel, err := filepath.Rel(dir, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			pos.Filename = "."
			if rel != "." {
				pos.Filename += string(filepath.Separator) + rel
			}
		}
	}
	if pos.Filename == "" {
		return e.msg()
	}
	return pos.String() + ": " + e.msg()
}

// ErrorList is the error returned by Generate when the source has
// problems: every Error, sorted by position. Use errors.As to get it.
type ErrorList []*Error

// Error returns the errors, one a line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors of the list, so that errors.Is looks into them.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sort orders the list by file, line, column and message, and drops exact
// duplicates.
func (l ErrorList) sort() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
			cmp.Compare(a.Msg, b.Msg))
	})
	return slices.CompactFunc(l, func(a, b *Error) bool { return a.Pos == b.Pos && a.Msg == b.Msg })
}

// errorf records an error at pos.
func (l *ErrorList) errorf(pos token.Position, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// parsePos turns go/packages' "file:line:col" (or "file:line", or "") into
// a position.
func parsePos(s string) token.Position {
	var p token.Position
	rest := s
	var nums []int
	for range 2 {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			break
		}
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		rest = rest[:i]
	}
	if s == "-" {
		return p
	}
	p.Filename = rest
	if len(nums) > 0 {
		p.Line = nums[0]
	}
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}
