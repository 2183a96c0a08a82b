package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklockkit/zklockkit/codegen"
	"github.com/zklockkit/zklockkit/codegen/internal/testmod"
)

// testdata is codegen's testdata module (absolute: the tests change
// directory).
var testdata = func() string {
	dir, err := filepath.Abs("../../testdata/mod")
	if err != nil {
		panic(err)
	}
	return dir
}()

// module makes a temporary copy of the testdata module, moves into dir
// under it and sets up the go command for it.
func module(t *testing.T, dir string) string {
	t.Helper()
	root := testmod.New(t, testdata)
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Chdir(filepath.Join(root, dir))
	return root
}

// zklockgen runs the command with args and returns its exit status and
// what it printed.
func zklockgen(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	code := run(ctx, args, &stderr)
	return code, stderr.String()
}

func golden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUsage(t *testing.T) {
	if code, out := zklockgen(t, "-h"); code != 0 || !strings.Contains(out, "Usage: zklockgen [flags] [package ...]") || !strings.Contains(out, "-check") {
		t.Errorf("-h: status %d, output:\n%s", code, out)
	}
	if code, out := zklockgen(t, "-nope"); code != 2 || !strings.Contains(out, "flag provided but not defined: -nope") {
		t.Errorf("-nope: status %d, output:\n%s", code, out)
	}
	if code, out := zklockgen(t, "-output", "x.go", "./a", "./b"); code != 2 || !strings.Contains(out, "-output can only be used with one package") {
		t.Errorf("-output with two packages: status %d, output:\n%s", code, out)
	}
}

// With no argument, the command generates for the package in the current
// directory, as go generate runs it; a second run changes nothing.
func TestGenerateCurrentPackage(t *testing.T) {
	root := module(t, "bank")
	if code, out := zklockgen(t); code != 0 || out != "" {
		t.Fatalf("status %d, output:\n%s", code, out)
	}
	out := filepath.Join(root, "bank", codegen.DefaultOutput)
	if readFile(t, out) != golden(t, "bank/zklock_gen.go.golden") {
		t.Error("the written file differs from bank's golden file")
	}
	before, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := zklockgen(t); code != 0 || out != "" {
		t.Fatalf("second run: status %d, output:\n%s", code, out)
	}
	after, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("an up-to-date file was rewritten")
	}
}

// -check exits 1 while the file is missing or stale, 0 once generated.
func TestCheck(t *testing.T) {
	module(t, "")
	code, out := zklockgen(t, "-check", "./bank", "./forms")
	if code != 1 || !strings.Contains(out, "zklockgen: bank/zklock_gen.go is stale or missing: run go generate") ||
		!strings.Contains(out, "zklockgen: forms/zklock_gen.go is stale or missing") {
		t.Errorf("-check before generating: status %d, output:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join("bank", codegen.DefaultOutput)); err == nil {
		t.Error("-check wrote a file")
	}
	if code, out := zklockgen(t, "./bank", "./forms"); code != 0 {
		t.Fatalf("generating: status %d, output:\n%s", code, out)
	}
	if code, out := zklockgen(t, "-check", "./bank", "./forms"); code != 0 || out != "" {
		t.Errorf("-check after generating: status %d, output:\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join("bank", codegen.DefaultOutput), []byte(codegen.Header+"\n\npackage bank\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := zklockgen(t, "-check", "./bank", "./forms"); code != 1 || !strings.Contains(out, "bank/zklock_gen.go is stale") || strings.Contains(out, "forms") {
		t.Errorf("-check with a stale file: status %d, output:\n%s", code, out)
	}
}

// Errors are printed like the compiler's, relative to the current
// directory, and the status is 1.
func TestErrorsLikeTheCompiler(t *testing.T) {
	module(t, "")
	code, out := zklockgen(t, "./errors/signature")
	if code != 1 {
		t.Errorf("status %d, want 1", code)
	}
	want := strings.ReplaceAll(golden(t, "errors/signature/errors.golden"), "./signature.go:", "./errors/signature/signature.go:")
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if code, out := zklockgen(t, "./errors/empty"); code != 1 || !strings.HasPrefix(out, "./errors/empty: no //zklock: directives in package example.com/zkgen/errors/empty") {
		t.Errorf("no directives: status %d, output:\n%s", code, out)
	}
	if code, out := zklockgen(t, "./nonexistent"); code != 1 || out == "" {
		t.Errorf("missing package: status %d, output:\n%s", code, out)
	}
}

// -type selects wrappers and functions and names the file after the first
// name; -output names the file.
func TestTypeAndOutput(t *testing.T) {
	root := module(t, "forms")
	if code, out := zklockgen(t, "-type", "Value,RunJob,job"); code != 0 {
		t.Fatalf("-type: status %d, output:\n%s", code, out)
	}
	if readFile(t, "value_zklock.go") != golden(t, "forms/value_zklock.go.golden") {
		t.Error("value_zklock.go differs from its golden file")
	}
	if code, out := zklockgen(t, "-type", "Nope"); code != 1 || !strings.Contains(out, "-type Nope: ") {
		t.Errorf("-type Nope: status %d, output:\n%s", code, out)
	}
	// The whole package, into another file: value_zklock.go, also a
	// zklockgen file, is ignored while loading.
	if err := os.Remove("value_zklock.go"); err != nil {
		t.Fatal(err)
	}
	if code, out := zklockgen(t, "-output", "locks.go"); code != 0 {
		t.Fatalf("-output: status %d, output:\n%s", code, out)
	}
	if readFile(t, filepath.Join(root, "forms", "locks.go")) != golden(t, "forms/zklock_gen.go.golden") {
		t.Error("locks.go differs from forms' golden file")
	}
	if code, out := zklockgen(t, "-tags", "sometag", "-check", "-output", "locks.go"); code != 0 {
		t.Errorf("-tags -check: status %d, output:\n%s", code, out)
	}
}

// A file at the output path that zklockgen did not write is kept.
func TestRefusesToOverwrite(t *testing.T) {
	module(t, "bank")
	const mine = "package bank\n\n// Mine is not generated.\nconst Mine = 1\n"
	if err := os.WriteFile(codegen.DefaultOutput, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := zklockgen(t)
	if code != 1 || !strings.Contains(out, "was not generated by zklockgen") {
		t.Errorf("status %d, output:\n%s", code, out)
	}
	if readFile(t, codegen.DefaultOutput) != mine {
		t.Error("the file was overwritten")
	}
}

// Comments one edit away from a directive are warnings: printed like
// errors, with "warning: ", and the file is generated; with -strict they
// are errors. Malformed directives are errors either way.
func TestWarnings(t *testing.T) {
	module(t, "")
	code, out := zklockgen(t, "./errors/typo")
	want := strings.ReplaceAll(golden(t, "errors/typo/warnings.golden"), "./typo.go:", "./errors/typo/typo.go:")
	if code != 0 || out != want {
		t.Errorf("status %d, output:\n%s\nwant status 0, output:\n%s", code, out, want)
	}
	if _, err := os.Stat(filepath.Join("errors", "typo", codegen.DefaultOutput)); err != nil {
		t.Errorf("no file generated: %v", err)
	}
	code, out = zklockgen(t, "-strict", "./errors/typo")
	want = strings.ReplaceAll(golden(t, "errors/typo/errors.golden"), "./typo.go:", "./errors/typo/typo.go:")
	if code != 1 || out != want {
		t.Errorf("-strict: status %d, output:\n%s\nwant status 1, output:\n%s", code, out, want)
	}
	code, out = zklockgen(t, "./errors/nearmiss")
	want = strings.ReplaceAll(golden(t, "errors/nearmiss/errors.golden"), "./nearmiss.go:", "./errors/nearmiss/nearmiss.go:")
	if code != 1 || out != want {
		t.Errorf("near misses: status %d, output:\n%s\nwant status 1, output:\n%s", code, out, want)
	}
}
