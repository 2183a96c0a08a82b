package codegen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
)

// directivePrefix starts every directive line. Being a Go directive (no
// space after "//"), it is dropped by ast.CommentGroup.Text, so directives
// are read from the comment list itself.
const directivePrefix = "//zklock:"

// directive is the content of every //zklock: line of one doc comment.
type directive struct {
	pos       token.Pos // the first line's "//"
	resources []*template
	mode      string // "" (exclusive), "exclusive", "read" or "write"
	wait      time.Duration
	try       bool
	limit     int      // limit=N: a semaphore of N holders
	label     string   // label=TEXT: zklock.Label
	text      []string // the options as written, for the generated doc
}

// directiveLines returns the //zklock: lines of a comment group.
func directiveLines(g *ast.CommentGroup) []*ast.Comment {
	if g == nil {
		return nil
	}
	var cs []*ast.Comment
	for _, c := range g.List {
		if isDirective(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// parseDirective parses the directive lines of one doc comment. Problems
// are recorded in errs with their position in the line; the directive
// returned holds what could be parsed.
func parseDirective(fset *token.FileSet, lines []*ast.Comment, errs *ErrorList) *directive {
	d := &directive{pos: lines[0].Slash}
	before := len(*errs)
	seen := map[string]token.Pos{}
	var waitPos token.Pos
	for _, c := range lines {
		at := func(off int) token.Position { return fset.Position(c.Slash + token.Pos(off)) }
		toks, err := splitOptions(c.Text, len(directivePrefix))
		if err != nil {
			errs.errorf(at(err.off), "%s", err.msg)
			continue
		}
		if len(toks) == 0 {
			errs.errorf(at(0), "empty //zklock: directive: want resource=TEMPLATE")
		}
		for _, t := range toks {
			key, val, hasVal := strings.Cut(t.text, "=")
			voffs := t.offs[min(len(key)+1, len(t.offs)-1):]
			switch key {
			case "resource", "mode", "wait", "try", "limit", "label":
			default:
				errs.errorf(at(t.off), "unknown option %q (want resource=, mode=, wait=, try, limit= or label=)", key)
				continue
			}
			if key != "resource" {
				if _, dup := seen[key]; dup {
					errs.errorf(at(t.off), "duplicate option %s", key)
					continue
				}
				seen[key] = c.Slash + token.Pos(t.off)
			}
			voff := voffs[0]
			switch key {
			case "try":
				if hasVal {
					errs.errorf(at(t.off), "malformed option %q: try takes no value", t.text)
					continue
				}
				d.try = true
			case "mode":
				switch val {
				case "exclusive", "read", "write":
					d.mode = val
				default:
					errs.errorf(at(t.off), "malformed option %q: want mode=exclusive, mode=read or mode=write", t.text)
					continue
				}
			case "wait":
				w, err := duration.Parse(val)
				switch {
				case !hasVal || val == "":
					errs.errorf(at(t.off), "malformed option %q: want wait=DURATION, such as wait=5s", t.text)
					continue
				case err != nil:
					var de *duration.Error
					if errors.As(err, &de) && de.Suggestion != "" {
						de.Suggestion = "wait=" + de.Suggestion
					}
					errs.errorf(at(voff), "malformed option %q: %v", t.text, err)
					continue
				case w <= 0:
					errs.errorf(at(voff), "malformed option %q: the wait must be positive", t.text)
					continue
				}
				d.wait, waitPos = w, c.Slash+token.Pos(t.off)
			case "limit":
				n, err := strconv.Atoi(val)
				if err != nil || n < 1 {
					errs.errorf(at(t.off), "malformed option %q: want limit=N, a semaphore of N holders (N at least 1)", t.text)
					continue
				}
				d.limit = n
			case "label":
				if val == "" {
					errs.errorf(at(t.off), "malformed option %q: want label=TEXT", t.text)
					continue
				}
				d.label = val
			case "resource":
				if !hasVal {
					errs.errorf(at(t.off), "malformed option %q: want resource=TEMPLATE", t.text)
					continue
				}
				tm, perr := parseTemplate(val, voffs)
				if perr != nil {
					errs.errorf(at(perr.off), "malformed option %q: %s", t.text, perr.msg)
					continue
				}
				dup := false
				for _, r := range d.resources {
					if r.text == tm.text {
						errs.errorf(at(t.off), "duplicate option %q", t.text)
						dup = true
					}
				}
				if dup {
					continue
				}
				tm.base = c.Slash
				d.resources = append(d.resources, tm)
			}
			d.text = append(d.text, t.text)
		}
	}
	if d.try && d.wait > 0 {
		errs.errorf(fset.Position(waitPos), "options try and wait= exclude each other")
	}
	if d.limit > 0 && (d.mode == "read" || d.mode == "write") {
		errs.errorf(fset.Position(d.pos), "options limit= and mode=%s exclude each other (a semaphore has no read or write side)", d.mode)
	}
	if len(d.resources) == 0 && len(*errs) == before {
		errs.errorf(fset.Position(d.pos), "//zklock: directive without resource=TEMPLATE")
	}
	return d
}

// option is one space-separated word of a directive line.
type option struct {
	text string // quotes removed
	offs []int  // offs[i]: the offset in the line of text[i]; one more at the end
	off  int    // offset of the word in the line
}

type syntaxError struct {
	off int
	msg string
}

// splitOptions splits line[start:] into options separated by spaces or
// tabs. Part of a word may be written in double quotes to hold spaces
// (resource="a b/{id}"); there are no escapes inside the quotes.
func splitOptions(line string, start int) ([]option, *syntaxError) {
	var opts []option
	i := start
	for i < len(line) {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		o := option{off: i}
		var b strings.Builder
		quoted := false
		for i < len(line) && (quoted || line[i] != ' ' && line[i] != '\t') {
			if line[i] == '"' {
				quoted = !quoted
				i++
				continue
			}
			b.WriteByte(line[i])
			o.offs = append(o.offs, i)
			i++
		}
		if quoted {
			return nil, &syntaxError{o.off, "unterminated quoted value"}
		}
		o.text = b.String()
		o.offs = append(o.offs, i)
		opts = append(opts, o)
	}
	return opts, nil
}

// options returns the generated code's acquire options, in a fixed order,
// given the names under which packages zklock and time are imported.
func (d *directive) options(zk, tm string) []string {
	var opts []string
	switch d.mode {
	case "read":
		opts = append(opts, zk+".Read")
	case "write":
		opts = append(opts, zk+".Write")
	}
	if d.limit > 0 {
		opts = append(opts, zk+".Limit("+strconv.Itoa(d.limit)+")")
	}
	if d.wait > 0 {
		opts = append(opts, zk+".MaxWait("+durationExpr(d.wait, tm)+")")
	}
	if d.try {
		opts = append(opts, zk+".Try()")
	}
	if d.label != "" {
		opts = append(opts, zk+".LeaseLabel("+strconv.Quote(d.label)+")")
	}
	return opts
}

// durationExpr writes d as a Go expression over package time's constants
// (imported as tm), e.g. "5 * time.Second", "1500 * time.Millisecond",
// "time.Minute".
func durationExpr(d time.Duration, tm string) string {
	units := []struct {
		d    time.Duration
		name string
	}{
		{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}, {time.Nanosecond, "Nanosecond"},
	}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return tm + "." + u.name
			}
			return fmt.Sprintf("%d * %s.%s", d/u.d, tm, u.name)
		}
	}
	panic("unreachable")
}
