package zklock_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The module's layering, as docs/architecture.md draws it: for each
// package (or tree of packages, "x/..."), the packages of this module it
// may import. A package of the module not listed imports what it likes,
// provided no listed package imports it. The test reads the imports with
// go list, so a change that breaks a rule fails here, naming the import.
var layers = []struct {
	pkg   string
	allow []string
}{
	{"zklock/internal/zkwire", nil},
	{"zklock/internal/errs", nil},
	{"zklock/internal/layout", nil},
	{"zklock/internal/wire", []string{"zklock/internal/zkwire"}},
	{"zklock/internal/dsn", []string{"zklock/internal/errs", "internal/duration"}},
	{"zklock/internal/gopool", nil},
	{"zklock/internal/session", []string{"zklock/internal/wire", "zklock/internal/errs", "zklock/internal/gopool", "internal/canary"}},
	{"zklock/internal/flight", []string{"zklock/internal/wire"}},
	{"zklock/internal/queue", []string{"zklock/internal/session", "zklock/internal/layout", "zklock/internal/errs", "internal/canary"}},
	{"zklock", []string{"zklock/internal/...", "internal/ctxsleep", "internal/canary"}},
	{"zklock/lockertest", []string{"zklock"}},
	{"internal/duration", nil},
	{"internal/ctxsleep", nil},
	{"internal/canary", nil},
	{"internal/procspawn", nil},
	{"internal/zkenv", nil},
	{"internal/restmpl", []string{"zklock"}},
	{"internal/pgtest", []string{"internal/procspawn"}},
	{"zktest", []string{"internal/procspawn"}},
	{"tracing", []string{"zklock"}},
	{"zkdebug", []string{"zklock"}},
}

const module = "github.com/zklockkit/zklockkit/"

func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	imports := map[string][]string{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				ours = append(ours, rest)
			}
		}
		imports[strings.TrimPrefix(p.ImportPath, module)] = ours
	}
	matches := func(pattern, pkg string) bool {
		if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
			return pkg == tree || strings.HasPrefix(pkg, tree+"/")
		}
		return pkg == pattern
	}
	for _, l := range layers {
		got, ok := imports[l.pkg]
		if !ok {
			t.Errorf("%s: no such package (update the layers of this test and docs/architecture.md)", l.pkg)
			continue
		}
		for _, imp := range got {
			if !slices.ContainsFunc(l.allow, func(a string) bool { return matches(a, imp) }) {
				t.Errorf("%s imports %s; it may import only %v (docs/architecture.md)", l.pkg, imp, l.allow)
			}
		}
	}
	// No library imports an application.
	for pkg, imps := range imports {
		if strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "examples/") {
			continue
		}
		for _, imp := range imps {
			if strings.HasPrefix(imp, "cmd/") || strings.HasPrefix(imp, "examples/") {
				t.Errorf("%s imports the application %s", pkg, imp)
			}
		}
	}
}
