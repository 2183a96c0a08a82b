package zktest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklockkit/zklockkit/zktest"
)

func TestTree(t *testing.T) {
	conn, _, err := zk.Connect([]string{zktest.Shared().Addr()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	root := zktest.UniqueRoot(t)
	for _, p := range []string{"/zktest", root, root + "/b", root + "/a", root + "/a/x", root + "/b/y"} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	got, err := zktest.Tree(conn, root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root, root + "/a", root + "/a/x", root + "/b", root + "/b/y"}
	if !slices.Equal(got, want) {
		t.Errorf("Tree(%s) = %q; want %q", root, got, want)
	}
	if got, err := zktest.Tree(conn, root+"/missing"); err != nil || len(got) != 0 {
		t.Errorf("Tree of a missing node = %q, %v; want empty, nil", got, err)
	}
	conn.Close()
	if _, err := zktest.Tree(conn, root); err == nil {
		t.Error("Tree on a closed connection returned no error")
	}
}
