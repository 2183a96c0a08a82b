package codegen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/codegen"
	"github.com/zklockkit/zklockkit/codegen/internal/testmod"
	"github.com/zklockkit/zklockkit/zktest"
)

// runnable are the testdata packages whose generated code is built and
// run.
var runnable = []string{"./bank", "./forms"}

// generated returns a temporary module with the generated files of the
// runnable packages written.
func generated(t *testing.T) string {
	t.Helper()
	dir := testmod.New(t, "testdata/mod")
	files, err := generate(t, dir, runnable)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	for _, f := range files {
		if err := f.Write(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The generated code compiles and passes go vet.
func TestGeneratedCodeBuilds(t *testing.T) {
	dir := generated(t)
	for _, args := range [][]string{{"build"}, {"vet"}} {
		if out, err := testmod.Go(t, dir, nil, append(args, runnable...)...); err != nil {
			t.Errorf("go %s: %v\n%s", args[0], err, out)
		}
	}
}

// The generated code runs against a real ZooKeeper: the tests of the
// testdata packages (bank_test.go, forms_test.go) run with two Clients per
// test, among them the check that two wrappers calling Withdraw at once
// never overlap.
func TestIntegration_GeneratedCode(t *testing.T) {
	dir := generated(t)
	env := []string{"ZKLOCK_SERVERS=" + zktest.Shared().Addr(), "ZKGEN_ROOT=" + zktest.UniqueRoot(t)}
	out, err := testmod.Go(t, dir, env, append([]string{"test", "-count=1", "-v"}, runnable...)...)
	if err != nil {
		t.Fatalf("go test in the generated module: %v\n%s", err, out)
	}
	for _, name := range []string{"TestTwoClientsNeverOverlap", "TestNestedCallReenters", "TestResourceNames"} {
		if !strings.Contains(out, "--- PASS: "+name) {
			t.Errorf("%s did not pass:\n%s", name, out)
		}
	}
	t.Logf("go test in the generated module:\n%s", out)
}

// The //go:generate line of the testdata packages (go tool zklockgen)
// works in a module that names zklockgen as a tool, writes what the
// library generates, and zklockgen -check then passes; it fails once a
// file is stale or missing.
func TestGoGenerateAndCheck(t *testing.T) {
	dir := testmod.New(t, "testdata/mod")
	if out, err := testmod.Go(t, dir, nil, append([]string{"generate"}, runnable...)...); err != nil {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	for _, pkg := range runnable {
		got, err := os.ReadFile(filepath.Join(dir, pkg, codegen.DefaultOutput))
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Join("testdata/mod", pkg, codegen.DefaultOutput+".golden"), got)
	}
	zklockgen := []string{"tool", "zklockgen"}
	check := append(append(zklockgen, "-check"), runnable...)
	if out, err := testmod.Go(t, dir, nil, check...); err != nil {
		t.Fatalf("zklockgen -check after go generate: %v\n%s", err, out)
	}

	// A new marked method makes bank's file stale.
	src := filepath.Join(dir, "bank", "bank.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\n//zklock:resource=extra/{id}\nfunc (b *Bank) Extra(ctx context.Context, id string) error { return nil }\n"...)
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := testmod.Go(t, dir, nil, check...)
	if err == nil || !strings.Contains(out, "zklockgen: bank/zklock_gen.go is stale or missing: run go generate") {
		t.Errorf("zklockgen -check with a stale file: err = %v, output:\n%s", err, out)
	}
	if strings.Contains(out, "forms/") {
		t.Errorf("zklockgen -check reported forms, which is up to date:\n%s", out)
	}

	// A missing file is reported too.
	if err := os.Remove(filepath.Join(dir, "forms", codegen.DefaultOutput)); err != nil {
		t.Fatal(err)
	}
	out, err = testmod.Go(t, dir, nil, append(append(zklockgen, "-check"), "./forms")...)
	if err == nil || !strings.Contains(out, "forms/zklock_gen.go is stale or missing") {
		t.Errorf("zklockgen -check with a missing file: err = %v, output:\n%s", err, out)
	}
}

// The generated file committed in examples/codegen is up to date (CI also
// runs go generate ./... && git diff --exit-code).
func TestExamplesUpToDate(t *testing.T) {
	root := testmod.Root(t)
	ctx := t.Context()
	files, err := codegen.Generate(ctx, []string{"./examples/codegen"}, codegen.WithDir(root))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	for _, f := range files {
		stale, err := f.Stale()
		if err != nil {
			t.Fatal(err)
		}
		if stale {
			t.Errorf("%s is stale: run go generate ./examples/codegen", f.Rel(root))
		}
	}
}
