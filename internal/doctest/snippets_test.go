package doctest_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
// package of its own that exists only in an overlay of the module: the
// compiler's messages name the page and line.
func TestDocSnippetsCompile(t *testing.T) {
	root, err := doctest.Root(".")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := doctest.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
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

	// One package per snippet and wrapper, in directories that exist in
	// the overlay only.
	overlay := map[string][]byte{}
	var patterns []string
	wrapperOf := map[string]string{} // by directory
	failed := map[int][]string{}     // by snippet: the errors of each wrapper tried
	for i, s := range snippets {
		for j, name := range strings.Split(s.Wrapper, "|") {
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
			dir := fmt.Sprintf("internal/doctest/zz-snippets/s%03d_%d", i, j)
			overlay[filepath.Join(root, filepath.FromSlash(dir), "snippet.go")] = []byte(src)
			patterns = append(patterns, "./"+dir)
			wrapperOf[dir] = name
		}
	}
	cfg := &packages.Config{
		Mode:    packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
		Dir:     root,
		Overlay: overlay,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(patterns) {
		t.Fatalf("%d packages loaded for %d snippets", len(pkgs), len(patterns))
	}
	passed := map[int]bool{}
	for _, p := range pkgs {
		dir := strings.TrimPrefix(p.PkgPath, "github.com/zklockkit/zklockkit/")
		var i int
		fmt.Sscanf(dir, "internal/doctest/zz-snippets/s%03d_", &i)
		msgs := compileErrors(p, filepath.Join(root, filepath.FromSlash(dir))+string(filepath.Separator))
		if len(msgs) == 0 {
			passed[i] = true
			continue
		}
		failed[i] = append(failed[i], fmt.Sprintf("in wrapper %q:\n\t%s", wrapperOf[dir], strings.Join(msgs, "\n\t")))
	}
	for i, s := range snippets {
		if !passed[i] && len(failed[i]) > 0 {
			t.Errorf("the Go at %s does not compile %s\n%s", s, strings.Join(failed[i], "\nnor "), indent(s.Code))
		}
	}
}

// compileErrors returns the errors of a snippet's package but those of
// unused names, with positions relative to the repository (the line
// directives name pages relative to it, which the loader puts under the
// package's directory, dir).
func compileErrors(p *packages.Package, dir string) []string {
	var typed, listed []string
	checked := len(p.Syntax) > 0 // then the type checker's errors say it all
	for _, e := range p.Errors {
		for _, line := range strings.Split(fmt.Sprintf("%s: %s", e.Pos, e.Msg), "\n") {
			line = strings.TrimPrefix(strings.TrimPrefix(line, ": "), dir)
			switch {
			case unused.MatchString(line), strings.HasPrefix(line, "# "), strings.TrimSpace(line) == "":
			case e.Kind == packages.ListError && checked:
			case e.Kind == packages.ListError:
				listed = append(listed, line)
			default:
				typed = append(typed, line)
			}
		}
	}
	if len(typed) > 0 {
		return typed
	}
	return listed
}

func indent(s string) string {
	return "\t| " + strings.ReplaceAll(s, "\n", "\n\t| ")
}
