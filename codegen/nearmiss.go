package codegen

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// A near miss is a comment line that looks like a //zklock: directive but
// is not one, so that without a report the method it marks would run
// unlocked. See the package documentation ("Near misses") for the rules.
type nearMiss struct {
	pos     token.Pos
	msg     string
	warning bool // a misspelled name rather than a misformed directive
}

// isDirective reports whether a comment is a //zklock: directive line: a
// line comment starting with "//zklock:" followed by a lower-case letter
// or a digit, as Go requires of a directive (gofmt turns any other
// "//zklock:" line into text, adding a space after "//"), or by nothing
// (an empty directive, reported by parseDirective).
func isDirective(c *ast.Comment) bool {
	rest, ok := strings.CutPrefix(c.Text, directivePrefix)
	return ok && (rest == "" || isLowerOrDigit(rest[0]))
}

func isLowerOrDigit(b byte) bool { return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' }

// nearMisses returns the near misses in one comment.
func nearMisses(c *ast.Comment) []nearMiss {
	if isDirective(c) {
		return nil
	}
	if body, ok := strings.CutPrefix(c.Text, "//"); ok {
		if nm, ok := checkLine(body, false, strings.HasPrefix(c.Text, directivePrefix)); ok {
			nm.pos = c.Slash
			return []nearMiss{nm}
		}
		return nil
	}
	// A block comment: every line, without the " * " decoration of the
	// lines after the first.
	var out []nearMiss
	text := strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/")
	off := 2
	for i, line := range strings.Split(text, "\n") {
		body := line
		if i > 0 {
			body = strings.TrimLeft(body, " \t")
			body = strings.TrimPrefix(body, "*")
		}
		if nm, ok := checkLine(body, true, false); ok {
			nm.pos = c.Slash
			if i > 0 {
				nm.pos += token.Pos(off + len(line) - len(strings.TrimLeft(line, " \t")))
			}
			out = append(out, nm)
		}
		off += len(line) + 1
	}
	return out
}

// checkLine checks the text of one comment line after its "//" (or a
// line of a block comment). A line comment starting "//zklock:" (exact)
// that is not a directive is always a near miss.
func checkLine(line string, block, exact bool) (nearMiss, bool) {
	t := strings.TrimLeft(line, " \t")
	spaceAfterSlash := !block && len(t) < len(line)
	n := 0
	for n < len(t) && isNameByte(t[n]) {
		n++
	}
	name, rest := t[:n], t[n:]
	afterName := strings.TrimLeft(rest, " \t")
	colon, ok := strings.CutPrefix(afterName, ":")
	if name == "" || !ok {
		return nearMiss{}, false
	}
	body := strings.TrimRight(strings.TrimLeft(colon, " \t"), " \t")
	lower := strings.ToLower(name)
	typo := lower != "zklock"
	if !exact && (typo && !oneEditAway(lower, "zklock") || !looksLikeOptions(body)) {
		return nearMiss{}, false
	}
	var why []string
	if block {
		why = append(why, "a /* */ comment")
	}
	if spaceAfterSlash {
		why = append(why, `space after "//"`)
	}
	if !typo && name != "zklock" {
		why = append(why, strconv.Quote(name)+" is not lower case")
	}
	if len(afterName) < len(rest) {
		why = append(why, `space before ":"`)
	}
	if strings.TrimLeft(colon, " \t") != colon {
		why = append(why, `space after ":"`)
	}
	fixed := fixOptions(body)
	if fixed != body {
		switch {
		case strings.HasPrefix(body, `"`):
			why = append(why, "a quote before the option name")
		default:
			why = append(why, "upper-case option name")
		}
	}
	write := directivePrefix + fixed
	if fixed == "" || !isLowerOrDigit(fixed[0]) {
		write = directivePrefix + "resource=TEMPLATE"
	}
	if len(why) == 0 {
		why = append(why, "no option name right after the colon")
	}
	if typo {
		return nearMiss{warning: true,
			msg: "possible misspelled //zklock: directive (" + strconv.Quote(name) + "): write " + write + " if it is meant to lock"}, true
	}
	return nearMiss{msg: "malformed //zklock: directive (" + strings.Join(why, ", ") + "): write " + write}, true
}

func isNameByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-'
}

// looksLikeOptions reports whether the text after a directive's colon
// starts like directive options: nothing, "try", NAME=..., or one of the
// option names alone. Prose such as "// zklock: the caller holds the
// lock" does not.
func looksLikeOptions(body string) bool {
	if body == "" {
		return true
	}
	word, _, _ := strings.Cut(strings.ReplaceAll(body, "\t", " "), " ")
	word = strings.ToLower(strings.TrimPrefix(word, `"`))
	if key, _, ok := strings.Cut(word, "="); ok {
		return isIdent(key)
	}
	switch word {
	case "try":
		return true
	case "resource", "mode", "wait":
		return word == strings.ToLower(body)
	}
	return false
}

func isIdent(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) || s[i] == '-' {
			return false
		}
	}
	return true
}

// fixOptions returns body with its first option written as a directive
// needs it: the name in lower case, and a quote opening the option moved
// after the "=" (resource="a b" rather than "resource=a b").
func fixOptions(body string) string {
	end := strings.IndexAny(body, " \t")
	if end < 0 {
		end = len(body)
	}
	word, rest := body[:end], body[end:]
	quoted := strings.HasPrefix(word, `"`)
	word = strings.TrimPrefix(word, `"`)
	key, val, hasVal := strings.Cut(word, "=")
	word = strings.ToLower(key)
	if hasVal {
		if quoted {
			val = `"` + val
		}
		word += "=" + val
	}
	return word + rest
}

// oneEditAway reports whether a and b differ by exactly one inserted,
// deleted or replaced byte, or two adjacent bytes swapped.
func oneEditAway(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		if a[i+1:] == b[i+1:] {
			return true
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return a[i:] == b[i+1:]
	}
	return false
}
