package scripts_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testFuncs returns every test and fuzz function of the module's test
// files, by name, with the files (relative to the module's root) that
// declare one of that name.
func testFuncs(t *testing.T) map[string][]string {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	funcs := map[string][]string{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		for _, f := range decl.FindAllSubmatch(b, -1) {
			funcs[string(f[1])] = append(funcs[string(f[1])], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return funcs
}

func testingDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// `make fuzz` runs every fuzz target of the module, and docs/testing.md
// names each: a target added without either would never run, or never be
// found.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	out, err := exec.Command("make", "-n", "-C", "..", "fuzz", "FUZZTIME=7s").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n fuzz: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`for t in ([^;]*);`).FindSubmatch(out)
	if m == nil || !strings.Contains(string(out), "-fuzztime 7s") {
		t.Fatalf("make -n fuzz runs no list of targets for FUZZTIME:\n%s", out)
	}
	listed := slices.Sorted(slices.Values(strings.Fields(string(m[1]))))
	var found []string
	for name, files := range testFuncs(t) {
		if strings.HasPrefix(name, "Fuzz") {
			for _, f := range files {
				found = append(found, "./"+filepath.ToSlash(filepath.Dir(f))+":"+name)
			}
		}
	}
	slices.Sort(found)
	if !slices.Equal(listed, found) {
		t.Errorf("make fuzz runs %q;\nthe module's fuzz targets are %q", listed, found)
	}
	doc := testingDoc(t)
	for _, f := range found {
		pkg, name, _ := strings.Cut(f, ":")
		want := "`" + name + "` (`" + strings.TrimPrefix(pkg, "./") + "`)"
		if !strings.Contains(doc, want) {
			t.Errorf("docs/testing.md does not list %s as %s", f, want)
		}
	}
}

// Every test docs/testing.md names exists, in the file it names: the
// page's list of defects is only worth its reproductions.
func TestTestingDocNamesRealTests(t *testing.T) {
	doc := testingDoc(t)
	funcs := testFuncs(t)
	named := regexp.MustCompile("`((?:Test|Fuzz)\\w+)`(?: \\(([\\w./-]+_test\\.go)\\))?")
	n := 0
	for _, m := range named.FindAllStringSubmatch(doc, -1) {
		name, file := m[1], m[2]
		n++
		files, ok := funcs[name]
		switch {
		case !ok:
			t.Errorf("docs/testing.md names %s, which no test file declares", name)
		case file != "" && !slices.Contains(files, file):
			t.Errorf("docs/testing.md puts %s in %s; it is in %v", name, file, files)
		}
	}
	if n < 100 {
		t.Errorf("docs/testing.md names %d tests: the pattern no longer reads it", n)
	}
}
