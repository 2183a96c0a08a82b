// Package testmod makes throwaway Go modules for the tests of codegen and
// zklockgen: a copy of a testdata tree whose go.mod requires
// github.com/zklockkit/zklockkit through a replace directive pointing at
// the repository under test, so generated code is built against the
// working tree, and names zklockgen as a tool. The module cache must
// already hold every dependency (the repository's go.sum is copied);
// GOPROXY is left as it is.
package testmod

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Path is the module path of every temporary module.
const Path = "example.com/zkgen"

const repoModule = "github.com/zklockkit/zklockkit"

// Tool is zklockgen's package, named by a tool directive in the go.mod of
// every temporary module, as "go get -tool" writes it: //go:generate go
// tool zklockgen then works there.
const Tool = repoModule + "/codegen/cmd/zklockgen"

// ZeroVersion is the version a temporary module requires the repository
// at; the replace directive points it at the working tree.
const ZeroVersion = "v0.0.0-00010101000000-000000000000"

// Root returns the repository root: the nearest directory at or above the
// working directory whose go.mod declares github.com/zklockkit/zklockkit.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if modulePath(filepath.Join(dir, "go.mod")) == repoModule {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("testmod: no go.mod of %s above the working directory", repoModule)
		}
		dir = parent
	}
}

func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// New copies the tree src into a new temporary directory and makes it the
// module Path. Files named *.golden are not copied.
func New(t testing.TB, src string) string {
	t.Helper()
	root := Root(t)
	dir := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if strings.HasSuffix(path, ".golden") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("testmod: copying %s: %v", src, err)
	}
	// The repository's requirements, as go get -tool would have added
	// them: go tool refuses to run from a go.mod that lacks the tool's
	// dependencies, whatever -mod says.
	gomod := "module " + Path + "\n\ngo 1.26\n\nrequire " + repoModule + " " + ZeroVersion + "\n\n" +
		"require (\n" + requirements(t, filepath.Join(root, "go.mod")) + ")\n\n" +
		"replace " + repoModule + " => " + root + "\n\ntool " + Tool + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requirements returns the module requirements of a go.mod file, one
// "path version" a line.
func requirements(t testing.TB, gomod string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "//")
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "":
			out.WriteString("\t" + line + "\n")
		case strings.HasPrefix(line, "require "):
			out.WriteString("\t" + strings.TrimPrefix(line, "require ") + "\n")
		}
	}
	return out.String()
}

// Env returns the environment for go commands in a temporary module: the
// current one with GOFLAGS=-mod=mod (the go command completes go.mod from
// the module cache) and GOWORK=off.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS=-mod=mod", "GOWORK=off")
}

// Go runs the go command in dir with Env plus extra variables and returns
// its combined output. It gives up after ten minutes.
func Go(t testing.TB, dir string, extra []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(Env(), extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
