package zklock_test

import (
	"errors"
	"fmt"

	"github.com/zklockkit/zklockkit/zklock"
)

// ParseDSN takes ZooKeeper's own connect string, as a Java service's
// configuration holds it, and names the bad part of a malformed one.
func ExampleParseDSN() {
	servers, _, err := zklock.ParseDSN("zk1:2181,zk2,[::1]/app?session_timeout=10s")
	fmt.Println(servers, err)

	_, _, err = zklock.ParseDSN("zk1:2181,,zk2")
	fmt.Println(errors.Is(err, zklock.ErrInvalidOption))
	fmt.Println(err)
	// Output:
	// [zk1:2181 zk2:2181 [::1]:2181] <nil>
	// true
	// zklock: invalid option: connection string "zk1:2181,,zk2": host 2 of 3: empty host (two commas in a row, or a comma at an end)
}
