package doctest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fact is a value the manual quotes, and the value the code gives it.
type Fact struct {
	// Name says what is quoted, for messages: "the try's answer bound".
	Name string
	// Source says where the code computes it: "zklock.Client.answerBound".
	Source string
	// Quote finds every quote of the fact in a page's text, in which
	// every run of blanks and line breaks is one space (a phrase may wrap).
	// Each group of it is one value.
	Quote *regexp.Regexp
	// Want holds the code's values, one per group of Quote: a string
	// (compared as written), an int, a float64, or a time.Duration
	// (compared as a duration: "1 s", "1s" and "1000 ms" agree).
	Want []any
	// Home lists the pages that may state the fact; nil: any page. A
	// quote elsewhere is a problem even with the right value: the fact
	// is stated once and linked to.
	Home []string
	// Gone, if set, makes every quote a problem with this message: a
	// statement the code no longer makes.
	Gone string
}

// Problem is a quote that disagrees with the code.
type Problem struct {
	Page string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return p.Page + ": " + p.Msg
	}
	return fmt.Sprintf("%s:%d: %s", p.Page, p.Line, p.Msg)
}

// Check returns the quotes of facts on pages that disagree with the code,
// quotes outside a fact's home, and facts that no page quotes.
func Check(pages []Page, facts []Fact) []Problem {
	var out []Problem
	texts := make([]flatText, len(pages))
	for i, p := range pages {
		texts[i] = flatten(p)
	}
	for _, f := range facts {
		if f.Gone == "" && f.Quote.NumSubexp() != len(f.Want) {
			out = append(out, Problem{Page: "(the facts)", Msg: fmt.Sprintf("%s: %d groups in %s, %d values", f.Name, f.Quote.NumSubexp(), f.Quote, len(f.Want))})
			continue
		}
		quoted := false
		for i, p := range pages {
			for _, m := range f.Quote.FindAllStringSubmatchIndex(texts[i].text, -1) {
				quoted = true
				line := texts[i].line[m[0]]
				if f.Gone != "" {
					out = append(out, Problem{p.Path, line, fmt.Sprintf("%q: %s", texts[i].text[m[0]:m[1]], f.Gone)})
					continue
				}
				if f.Home != nil && !slices.Contains(f.Home, p.Path) {
					out = append(out, Problem{p.Path, line, fmt.Sprintf("states %s (%q), whose home is %s: link there instead",
						f.Name, texts[i].text[m[0]:m[1]], strings.Join(f.Home, ", "))})
				}
				for g, want := range f.Want {
					got := texts[i].text[m[2+2*g]:m[3+2*g]]
					if !same(got, want) {
						out = append(out, Problem{p.Path, line, fmt.Sprintf("quotes %s as %q in %q; the code says %v (%s)",
							f.Name, got, texts[i].text[m[0]:m[1]], show(want), f.Source)})
					}
				}
			}
		}
		if !quoted && f.Gone == "" {
			out = append(out, Problem{Page: "(no page)", Msg: fmt.Sprintf("no page quotes %s any more (pattern %s): reword the fact's pattern or drop the fact", f.Name, f.Quote)})
		}
	}
	return out
}

// same reports whether the quoted text got says want.
func same(got string, want any) bool {
	got = strings.TrimSpace(got)
	switch w := want.(type) {
	case string:
		return got == w
	case int:
		n, err := strconv.Atoi(got)
		return err == nil && n == w
	case float64:
		x, err := strconv.ParseFloat(got, 64)
		return err == nil && x == w
	case time.Duration:
		d, err := time.ParseDuration(strings.ReplaceAll(got, " ", ""))
		return err == nil && d == w
	}
	return false
}

// show renders a value as the pages write it.
func show(v any) string {
	if d, ok := v.(time.Duration); ok {
		return Duration(d)
	}
	return fmt.Sprint(v)
}

// Duration writes d as the manual does: "1 s", "10 ms", "3.75 s".
func Duration(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Millisecond == 0:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return d.String()
}

// flatText is a page's text with each run of blanks and line breaks
// made one space, and the line each byte came from.
type flatText struct {
	text string
	line []int
}

func flatten(p Page) flatText {
	var b strings.Builder
	var line []int
	space := false
	for n, l := range p.Lines {
		for _, r := range l + "\n" {
			if r == ' ' || r == '\t' || r == '\n' {
				space = true
				continue
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
				line = append(line, n+1)
			}
			space = false
			k := b.Len()
			b.WriteRune(r)
			for ; k < b.Len(); k++ {
				line = append(line, n+1)
			}
		}
	}
	line = append(line, len(p.Lines)) // for a match at the very end
	return flatText{b.String(), line}
}
