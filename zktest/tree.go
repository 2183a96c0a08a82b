package zktest

import (
	"errors"
	"fmt"
	"path"
	"sort"

	"github.com/go-zookeeper/zk"
)

// Tree lists root and every znode below it, sorted, as read through conn.
// A node deleted while the walk runs is left out; a missing root gives an
// empty list. Tests use it to prove that nothing was left behind.
func Tree(conn *zk.Conn, root string) ([]string, error) {
	var out []string
	var walk func(p string) error
	walk = func(p string) error {
		kids, _, err := conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("zktest: children of %s: %w", p, err)
		}
		out = append(out, p)
		for _, k := range kids {
			if err := walk(path.Join(p, k)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
