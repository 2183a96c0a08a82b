// Command probe is built by the canary package's tests with and without
// the tag zklock_canary: it prints a marker when the canary its argument
// names is on.
package main

import (
	"fmt"
	"os"

	"github.com/zklockkit/zklockkit/internal/canary"
)

func main() {
	if canary.On(canary.RequeueNoWatch) {
		fmt.Println("probe-marker: the requeue-no-watch branch ran")
	}
	fmt.Println("probe: done")
	os.Exit(0)
}
