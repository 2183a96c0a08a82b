package codegen_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/codegen"
	"github.com/zklockkit/zklockkit/codegen/internal/testmod"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// generate runs Generate in the temporary module dir.
func generate(t *testing.T, dir string, patterns []string, opts ...codegen.Option) ([]*codegen.File, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts = append([]codegen.Option{codegen.WithDir(dir), codegen.WithEnv(testmod.Env())}, opts...)
	return codegen.Generate(ctx, patterns, opts...)
}

// compareGolden compares got with the golden file, or rewrites it with
// -update.
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s (run go test -run %s -update to accept it):\n%s",
			golden, t.Name(), lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}

// The generated files for the testdata packages match their golden files,
// and a second run gives the same bytes.
func TestGolden(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	cases := []struct {
		name, pkg string
		opts      []codegen.Option
		out       string // output file, relative to the package
	}{
		{"bank", "bank", nil, "zklock_gen.go"},
		{"forms", "forms", nil, "zklock_gen.go"},
		{"forms-type", "forms", []codegen.Option{codegen.WithTypes("Value", "RunJob,job")}, "value_zklock.go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, err := generate(t, dir, []string{"./" + c.pkg}, c.opts...)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if len(files) != 1 {
				t.Fatalf("Generate returned %d files, want 1", len(files))
			}
			f := files[0]
			if want := filepath.Join(dir, c.pkg, c.out); f.Path != want {
				t.Errorf("Path = %s, want %s", f.Path, want)
			}
			if want := testmod.Path + "/" + c.pkg; f.Package != want {
				t.Errorf("Package = %s, want %s", f.Package, want)
			}
			if !strings.HasPrefix(string(f.Content), codegen.Header+"\n") {
				t.Errorf("the file does not start with %q", codegen.Header)
			}
			compareGolden(t, filepath.Join("testdata/mod", c.pkg, c.out+".golden"), f.Content)

			// Deterministic, and independent of a previous output
			// (even a broken one) in the package.
			if err := os.WriteFile(f.Path, []byte(codegen.Header+"\n\npackage "+c.pkg+"\n\nfunc broken( {\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			again, err := generate(t, dir, []string{"./" + c.pkg}, c.opts...)
			if err != nil {
				t.Fatalf("Generate over a broken previous output: %v", err)
			}
			if string(again[0].Content) != string(f.Content) {
				t.Error("a second run gave different output")
			}
		})
	}
}

// Every error case under testdata/mod/errors gives the errors listed in
// its errors.golden, positions relative to the case's directory.
func TestErrors(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	_, err := generate(t, dir, []string{"./errors/..."})
	var list codegen.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Generate = %v, want an ErrorList", err)
	}
	byCase := map[string][]string{}
	for _, e := range list {
		rel, err := filepath.Rel(filepath.Join(dir, "errors"), e.Pos.Filename)
		if err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("error outside the cases: %v", e)
			continue
		}
		name, _, _ := strings.Cut(rel, string(filepath.Separator))
		byCase[name] = append(byCase[name], e.Relative(filepath.Join(dir, "errors", name)))
	}
	cases, err := os.ReadDir("testdata/mod/errors")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			got := byCase[c.Name()]
			if len(got) == 0 {
				t.Fatal("no error reported")
			}
			compareGolden(t, filepath.Join("testdata/mod/errors", c.Name(), "errors.golden"), []byte(strings.Join(got, "\n")+"\n"))
		})
		delete(byCase, c.Name())
	}
	for name := range byCase {
		t.Errorf("errors for an unknown case %s", name)
	}
	if !errors.Is(err, codegen.ErrNoDirectives) && !slices.ContainsFunc(list, func(e *codegen.Error) bool { return errors.Is(e, codegen.ErrNoDirectives) }) {
		t.Error("no error matches ErrNoDirectives")
	}
}

// A -type name that selects nothing is an error matching ErrNoDirectives;
// so is a package without directives.
func TestNoDirectives(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	_, err := generate(t, dir, []string{"./bank"}, codegen.WithTypes("Bank,Nope"))
	if !errors.Is(err, codegen.ErrNoDirectives) || !strings.Contains(err.Error(), "-type Nope: ") {
		t.Errorf("Generate -type Nope = %v, want ErrNoDirectives about Nope", err)
	}
	_, err = generate(t, dir, []string{"./other"})
	if !errors.Is(err, codegen.ErrNoDirectives) {
		t.Errorf("Generate on a package without directives = %v, want ErrNoDirectives", err)
	}
}

// With WithTypes, the directives of other types and functions are not
// checked.
func TestTypeFilterChecksOnlySelected(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	_, err := generate(t, dir, []string{"./errors/signature"}, codegen.WithTypes("S"))
	var list codegen.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Msg, "Method: a method marked //zklock: must take a context.Context") {
		t.Errorf("Generate -type S = %v, want only the error of S.Method", err)
	}
}

// Syntax errors and go command errors are reported, with positions where
// the go command gives them.
func TestLoadErrors(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	if err := os.MkdirAll(filepath.Join(dir, "bad"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", "bad.go"), []byte("package bad\n\nfunc (\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := generate(t, dir, []string{"./bad"})
	var list codegen.ErrorList
	if !errors.As(err, &list) || !strings.Contains(list[0].Relative(dir), "bad.go:") {
		t.Errorf("Generate on a syntax error = %v, want an ErrorList at bad.go", err)
	}
	if _, err := generate(t, dir, []string{"./nonexistent"}); err == nil {
		t.Error("Generate on a missing package succeeded")
	}
	if _, err := generate(t, dir, []string{"./bank", "./forms"}, codegen.WithOutput("x.go")); err == nil {
		t.Error("WithOutput with two packages succeeded")
	}
}

// With WithWarnings, comments one edit away from a directive are passed
// to the function, sorted, and generation goes on; without it (as in
// TestErrors) they are errors. A package whose only would-be directive is
// misspelled fails with ErrNoDirectives, and the warning says why.
func TestWithWarnings(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	var warns []string
	collect := codegen.WithWarnings(func(e *codegen.Error) {
		if !e.Warning {
			t.Errorf("warning without Warning set: %v", e)
		}
		warns = append(warns, e.Relative(filepath.Join(dir, "errors", "typo")))
	})
	files, err := generate(t, dir, []string{"./errors/typo"}, collect)
	if err != nil || len(files) != 1 {
		t.Fatalf("Generate with WithWarnings = %d files, %v; want 1 file", len(files), err)
	}
	if !strings.Contains(string(files[0].Content), "func LockedValid(") {
		t.Errorf("the valid directive was not generated:\n%s", files[0].Content)
	}
	compareGolden(t, "testdata/mod/errors/typo/warnings.golden", []byte(strings.Join(warns, "\n")+"\n"))

	only := filepath.Join(dir, "onlytypo")
	if err := os.MkdirAll(only, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package onlytypo\n\nimport \"context\"\n\n//zklok:resource=a\nfunc F(ctx context.Context) error { return nil }\n"
	if err := os.WriteFile(filepath.Join(only, "f.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	warns = nil
	_, err = generate(t, dir, []string{"./onlytypo"}, collect)
	if !errors.Is(err, codegen.ErrNoDirectives) || len(warns) != 1 || !strings.Contains(warns[0], `f.go:5:1: warning: possible misspelled //zklock: directive ("zklok")`) {
		t.Errorf("only a misspelled directive: err = %v, warnings %q", err, warns)
	}
	_, err = generate(t, dir, []string{"./onlytypo"})
	if errors.Is(err, codegen.ErrNoDirectives) || err == nil || !strings.Contains(err.Error(), `possible misspelled //zklock: directive ("zklok")`) {
		t.Errorf("only a misspelled directive, without WithWarnings: err = %v, want the warning as an error", err)
	}
}
