package doctest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Page is a page of the manual, split into lines.
type Page struct {
	Path  string // relative to the repository root, with slashes
	Lines []string
}

// Root returns the repository root: the nearest directory from dir
// upwards that holds go.mod.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = up
	}
}

// Pages reads README.md and docs/*.md under root, then the extra files
// (paths relative to root). Of a Go file, only the text of its comments
// is kept (a package's documentation), on their lines.
func Pages(root string, extra ...string) ([]Page, error) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	slices.Sort(docs)
	paths := []string{"README.md"}
	for _, d := range docs {
		paths = append(paths, "docs/"+filepath.Base(d))
	}
	paths = append(paths, extra...)
	pages := make([]Page, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(b), "\n")
		if strings.HasSuffix(p, ".go") {
			for i, l := range lines {
				c, ok := strings.CutPrefix(strings.TrimSpace(l), "//")
				if !ok {
					c = ""
				}
				lines[i] = c
			}
		}
		pages = append(pages, Page{Path: p, Lines: lines})
	}
	return pages, nil
}

// Snippet is Go code on a page: a fenced block, or a code span in a
// declared table column.
type Snippet struct {
	Page    string
	Line    int    // the line of its first line of code, from 1
	Wrapper string // the wrapper's name ("" for a whole file); in a table, names separated by "|" are alternatives
	Code    string
}

func (s Snippet) String() string { return fmt.Sprintf("%s:%d", s.Page, s.Line) }

var (
	goComment    = regexp.MustCompile(`^<!--\s*go:\s*([\w-]+)\s*-->$`)
	tableComment = regexp.MustCompile(`^<!--\s*go-table:((?:\s+\d+=[\w|-]+)+)\s*-->$`)
	codeSpan     = regexp.MustCompile("`([^`]+)`")
)

// Snippets returns the Go code of pages (see the package documentation).
func Snippets(pages []Page) ([]Snippet, error) {
	var out []Snippet
	var errs []string
	for _, p := range pages {
		for i := 0; i < len(p.Lines); i++ {
			line := strings.TrimSpace(p.Lines[i])
			switch {
			case goComment.MatchString(line):
				if i+1 >= len(p.Lines) || strings.TrimSpace(p.Lines[i+1]) != "```go" {
					errs = append(errs, fmt.Sprintf("%s:%d: %s is not on the line before a ```go fence", p.Path, i+1, line))
				}
			case tableComment.MatchString(line):
				s, err := tableSnippets(p, i)
				if err != nil {
					errs = append(errs, err.Error())
				}
				out = append(out, s...)
			case line == "```go":
				s := Snippet{Page: p.Path, Line: i + 2, Wrapper: "body"}
				if i > 0 {
					if m := goComment.FindStringSubmatch(strings.TrimSpace(p.Lines[i-1])); m != nil {
						s.Wrapper = m[1]
					}
				}
				end := i + 1
				for end < len(p.Lines) && !strings.HasPrefix(strings.TrimSpace(p.Lines[end]), "```") {
					end++
				}
				if end == len(p.Lines) {
					errs = append(errs, fmt.Sprintf("%s:%d: ```go fence not closed", p.Path, i+1))
				}
				s.Code = strings.Join(p.Lines[i+1:end], "\n")
				if wholeFile(s.Code) {
					s.Wrapper = ""
				}
				out = append(out, s)
				i = end
			}
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// wholeFile reports whether code starts with a package clause.
func wholeFile(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.HasPrefix(l, "package ")
	}
	return false
}

// tableSnippets returns the code spans of the columns the go-table comment
// on line i of p declares, in the table that follows it.
func tableSnippets(p Page, i int) ([]Snippet, error) {
	cols := map[int]string{}
	for _, f := range strings.Fields(tableComment.FindStringSubmatch(strings.TrimSpace(p.Lines[i]))[1]) {
		var n int
		var w string
		if _, err := fmt.Sscanf(strings.Replace(f, "=", " ", 1), "%d %s", &n, &w); err != nil || n < 1 {
			return nil, fmt.Errorf("%s:%d: bad column %q (want N=WRAPPER)", p.Path, i+1, f)
		}
		cols[n] = w
	}
	var out []Snippet
	row := 0
	for j := i + 1; j < len(p.Lines) && strings.HasPrefix(strings.TrimSpace(p.Lines[j]), "|"); j++ {
		row++
		if row <= 2 { // the header and the separator
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(p.Lines[j]), "|"), "|")
		for n, w := range cols {
			if n > len(cells) {
				return out, fmt.Errorf("%s:%d: no column %d", p.Path, j+1, n)
			}
			for _, m := range codeSpan.FindAllStringSubmatch(cells[n-1], -1) {
				out = append(out, Snippet{Page: p.Path, Line: j + 1, Wrapper: w, Code: m[1]})
			}
		}
	}
	if row < 3 {
		return out, fmt.Errorf("%s:%d: no table after the go-table comment", p.Path, i+1)
	}
	slices.SortStableFunc(out, func(a, b Snippet) int { return a.Line - b.Line })
	return out, nil
}

var (
	importLine  = regexp.MustCompile(`^import\s+((?:[\w.]+\s+)?"[^"]+")\s*(?://.*)?$`)
	importSpec  = regexp.MustCompile(`^((?:[\w.]+\s+)?"[^"]+")\s*(?://.*)?$`)
	elidedBody  = regexp.MustCompile(`^(\s*func\b.*)\{\s*\.\.\.\s*\}(.*)$`)
	ellipsis    = regexp.MustCompile(`(^|[^\w)\]])\.\.\.`)
	importPath  = regexp.MustCompile(`"([^"]+)"`)
	snippetMark = "//snippet"
	inlineMark  = "/*snippet*/"
	importsMark = "//imports"
)

// Source returns the Go file that compiles s: the code inside its wrapper
// (the text of testdata/wrappers/NAME.go.tmpl), its import lines moved to
// the wrapper's, with line directives that point the compiler's messages
// at the page.
func (s Snippet) Source(wrapper string) (string, error) {
	lines := strings.Split(s.Code, "\n")
	if s.Wrapper == "" {
		return fmt.Sprintf("//line %s:%d\n%s\n", s.Page, s.Line, s.Code), nil
	}
	// The fragment's imports, before its first other line.
	var imports []string
	first := 0
imports:
	for ; first < len(lines); first++ {
		l := strings.TrimSpace(lines[first])
		switch {
		case l == "":
		case importLine.MatchString(l):
			imports = append(imports, importLine.FindStringSubmatch(l)[1])
		case l == "import (":
			for first++; first < len(lines) && strings.TrimSpace(lines[first]) != ")"; first++ {
				if spec := strings.TrimSpace(lines[first]); spec != "" {
					m := importSpec.FindStringSubmatch(spec)
					if m == nil {
						return "", fmt.Errorf("%s:%d: cannot read the import %q", s.Page, s.Line+first, spec)
					}
					imports = append(imports, m[1])
				}
			}
		default:
			break imports
		}
	}
	code := lines[first:]
	for i, l := range code {
		if m := elidedBody.FindStringSubmatch(l); m != nil {
			l = m[1] + `{ panic("elided") }` + m[2]
		}
		code[i] = ellipsis.ReplaceAllString(l, "${1}/* elided */")
	}
	// The wrapper, with the fragment's imports in place of its own of
	// the same paths.
	var paths []string
	for _, im := range imports {
		paths = append(paths, importPath.FindStringSubmatch(im)[1])
	}
	var b strings.Builder
	marked := false
	for n, l := range strings.Split(wrapper, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == importsMark:
			for _, im := range imports {
				b.WriteString("\t" + im + "\n")
			}
			continue
		case t == snippetMark:
			marked = true
			fmt.Fprintf(&b, "//line %s:%d\n%s\n//line wrapper-%s.go:%d\n", s.Page, s.Line+first, strings.Join(code, "\n"), s.Wrapper, n+2)
			continue
		case strings.Contains(l, inlineMark):
			marked = true
			l = strings.Replace(l, inlineMark, fmt.Sprintf("/*line %s:%d:1*/%s", s.Page, s.Line+first, strings.Join(code, "\n")), 1)
		}
		if m := importSpec.FindStringSubmatch(t); m != nil && slices.Contains(paths, importPath.FindStringSubmatch(m[1])[1]) {
			continue
		}
		b.WriteString(l + "\n")
	}
	if !marked {
		return "", fmt.Errorf("wrapper %s has no %s line nor %s", s.Wrapper, snippetMark, inlineMark)
	}
	return b.String(), nil
}
