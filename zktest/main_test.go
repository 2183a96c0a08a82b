package zktest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zklockkit/zklockkit/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

func TestInstalled(t *testing.T) {
	if err := zktest.Installed(); err != nil {
		t.Fatalf("Installed() = %v, want nil", err)
	}
	if !strings.Contains(zktest.ErrNotInstalled.Error(), "apt-get update && apt-get install -y zookeeper") {
		t.Errorf("ErrNotInstalled lacks the install command: %q", zktest.ErrNotInstalled)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no java
	err := zktest.Installed()
	if !errors.Is(err, zktest.ErrNotInstalled) {
		t.Fatalf("Installed() without java = %v; want ErrNotInstalled", err)
	}
	if _, err := zktest.StartServer(); !errors.Is(err, zktest.ErrNotInstalled) {
		t.Fatalf("StartServer without java = %v; want ErrNotInstalled", err)
	}
}

func TestShared(t *testing.T) {
	m, err := zktest.Shared().Mode()
	if err != nil || m != "standalone" {
		t.Fatalf("Shared().Mode() = %q, %v; want standalone", m, err)
	}
}

func TestUniqueRoot(t *testing.T) {
	a, b := zktest.UniqueRoot(t), zktest.UniqueRoot(t)
	if !strings.HasPrefix(a, "/zktest/TestUniqueRoot-") || a == b {
		t.Errorf("UniqueRoot = %q, %q", a, b)
	}
	t.Run("sub test/x", func(t *testing.T) {
		r := zktest.UniqueRoot(t)
		if strings.Count(r, "/") != 2 || strings.ContainsAny(r, " ") {
			t.Errorf("UniqueRoot in subtest = %q", r)
		}
	})
}
