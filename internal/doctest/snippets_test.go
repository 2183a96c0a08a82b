package doctest_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/zklockkit/zklockkit/internal/doctest"
)

// unused is what the compiler says of a variable or import a fragment
// declares and does not use: no error in a fragment, which stops where the
// reader's own code goes on.
var unused = regexp.MustCompile(`declared and not used|imported and not used|imported as \w+ and not used`)

// TestDocSnippetsCompile type-checks every Go snippet of README.md and
// docs/*.md, each in its wrapper (see the package documentation), as a
// package of its own, against the export data of the packages it imports;
// the type checker's messages name the page and line.
func TestDocSnippetsCompile(t *testing.T) {
	root, pages := load(t)
	snippets, err := doctest.Snippets(pages)
	if err != nil {
		t.Error(err)
	}
	if len(snippets) < 40 {
		t.Fatalf("%d snippets found; the pages hold more", len(snippets))
	}
	wrappers := map[string]string{}
	files, err := filepath.Glob("testdata/wrappers/*.go.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wrappers[strings.TrimSuffix(filepath.Base(f), ".go.tmpl")] = string(b)
	}

	// Each snippet in each of its wrappers, parsed.
	type try struct {
		snippet int
		wrapper string
		file    *ast.File
	}
	var tries []try
	fset := token.NewFileSet()
	imports := map[string]bool{}
	failed := map[int][]string{} // by snippet: the errors of each wrapper tried
	for i, s := range snippets {
		for _, name := range strings.Split(s.Wrapper, "|") {
			w, ok := wrappers[name]
			if name != "" && !ok {
				t.Errorf("%s: no wrapper %q (testdata/wrappers has %v)", s, name, slices.Sorted(maps.Keys(wrappers)))
				continue
			}
			one := s
			one.Wrapper = name
			src, err := one.Source(w)
			if err != nil {
				t.Errorf("%s: %v", s, err)
				continue
			}
			f, err := parser.ParseFile(fset, "snippet.go", src, parser.ParseComments)
			if err != nil {
				failed[i] = append(failed[i], fmt.Sprintf("in wrapper %q:\n\t%v", name, err))
				continue
			}
			for _, im := range f.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				imports[path] = true
			}
			tries = append(tries, try{i, name, f})
		}
	}

	// The packages they import, from the compiler's export data, then
	// each snippet type-checked against them as a package of its own.
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root}, slices.Sorted(maps.Keys(imports))...)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*types.Package{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("load %s: %v", p.PkgPath, e)
		}
		byPath[p.PkgPath] = p.Types
	}
	passed := map[int]bool{}
	for _, tr := range tries {
		var msgs []string
		conf := types.Config{
			Importer: importerFunc(func(path string) (*types.Package, error) {
				if p := byPath[path]; p != nil {
					return p, nil
				}
				return nil, fmt.Errorf("%s not loaded", path)
			}),
			Error: func(err error) {
				if e, ok := err.(types.Error); !ok || !unused.MatchString(e.Msg) {
					msgs = append(msgs, err.Error())
				}
			},
		}
		_, _ = conf.Check("snippet", fset, []*ast.File{tr.file}, nil)
		if len(msgs) == 0 {
			passed[tr.snippet] = true
			continue
		}
		failed[tr.snippet] = append(failed[tr.snippet], fmt.Sprintf("in wrapper %q:\n\t%s", tr.wrapper, strings.Join(msgs, "\n\t")))
	}
	for i, s := range snippets {
		if !passed[i] && len(failed[i]) > 0 {
			t.Errorf("the Go at %s does not compile %s\n%s", s, strings.Join(failed[i], "\nnor "), indent(s.Code))
		}
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func indent(s string) string {
	return "\t| " + strings.ReplaceAll(s, "\n", "\n\t| ")
}
