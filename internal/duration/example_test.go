package duration_test

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/zklockkit/zklockkit/internal/duration"
)

func ExampleParse() {
	for _, s := range []string{"1m30s", "5", "10000", "5sec"} {
		d, err := duration.Parse(s)
		fmt.Println(d, err)
	}
	// Output:
	// 1m30s <nil>
	// 0s bad duration "5": missing unit, did you mean 5s? (write a number with a unit: 250ms, 5s or 1m30s)
	// 0s bad duration "10000": missing unit, did you mean 10000ms? (write a number with a unit: 250ms, 5s or 1m30s)
	// 0s bad duration "5sec": unknown unit "sec", did you mean 5s? (units: ns, us, ms, s, m, h)
}

func ExampleVar() {
	fs := flag.NewFlagSet("zklock run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var wait time.Duration
	v := duration.Var(fs, &wait, "wait", 0, "give up after this `duration`")
	fmt.Println(fs.Parse([]string{"--wait", "90"}) != nil)
	fmt.Println(v.Err())
	// Output:
	// true
	// bad --wait "90": missing unit, did you mean 90s? (write a number with a unit: 250ms, 5s or 1m30s)
}
