package codegen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/codegen/internal/testmod"
	"github.com/zklockkit/zklockkit/zktest"
)

// README's way in works in a fresh module, with no go.sum and no GOFLAGS:
//
//	go mod init
//	go get github.com/zklockkit/zklockkit/zklock
//	go get -tool github.com/zklockkit/zklockkit/codegen/cmd/zklockgen
//	//go:generate go tool zklockgen
//	go generate ./... && go build
//
// and the program built (testdata/fresh) holds its lock against a real
// ZooKeeper, reached through ZKLOCK_SERVERS in ZooKeeper's native form
// with a chroot.
//
// The repository is not published, so before the go get lines the module
// requires it at a zero version replaced by the working tree, which is
// what go get resolves a published version to. Dependencies come from the
// module cache (GOPROXY=off: the test needs no network and no module
// proxy lookup of the unpublished path); GOSUMDB=off because the checksum
// database is out of reach from the test machines (go get still writes
// go.sum from the module cache; a user's go get also checks it).
func TestFreshModuleGoTool(t *testing.T) {
	root := testmod.Root(t)
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/fresh/jobs.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GOFLAGS=", "GOPROXY=off", "GOSUMDB=off"}
	step := func(args ...string) string {
		t.Helper()
		out, err := testmod.Go(t, dir, env, args...)
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	step("mod", "init", "example.com/fresh")
	step("mod", "edit", "-require=github.com/zklockkit/zklockkit@"+testmod.ZeroVersion,
		"-replace=github.com/zklockkit/zklockkit="+root)
	if err := os.WriteFile(filepath.Join(dir, "jobs.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	step("get", "github.com/zklockkit/zklockkit/zklock")
	step("get", "-tool", testmod.Tool)
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "\ntool "+testmod.Tool+"\n") {
		t.Fatalf("go get -tool wrote no tool directive:\n%s", gomod)
	}
	step("generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "zklock_gen.go")); err != nil {
		t.Fatalf("go generate wrote no zklock_gen.go: %v", err)
	}
	step("build", "-o", "fresh", ".")
	chroot := zktest.UniqueRoot(t)
	cmd := exec.Command(filepath.Join(dir, "fresh"))
	cmd.Env = append(os.Environ(), "ZKLOCK_SERVERS="+zktest.Shared().Addr()+chroot)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("running the program: %v\n%s", err, out)
	}
	for _, want := range []string{"jobs/42 held while Run ran\n", "jobs/42 released after Run; root " + chroot + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the program's output lacks %q:\n%s", want, out)
		}
	}
}
