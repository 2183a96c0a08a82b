package tracing_test

import (
	"testing"

	"github.com/zklockkit/zklockkit/tracing"
)

func TestDefaultResourceClass(t *testing.T) {
	for in, want := range map[string]string{
		"accounts/42":          "accounts/{id}",
		"accounts/42/orders/7": "accounts/{id}/orders/{id}",
		"orders:7f3c2a9e-0b1d-4c5e-9f00-112233445566":   "orders:{id}",
		"orders/7F3C2A9E-0B1D-4C5E-9F00-112233445566/x": "orders/{id}/x",
		"blobs/9f86d081884c7d65/meta":                   "blobs/{id}/meta",
		"blobs/9f86d081884c7d6":                         "blobs/9f86d081884c7d6", // 15 hex digits: a word, maybe
		"blobs/deadbeef":                                "blobs/deadbeef",
		"accounts/1,accounts/2":                         "accounts/{id},accounts/{id}",
		"/locks/legacy/17":                              "/locks/legacy/{id}",
		"reports/daily":                                 "reports/daily",
		"v2/users":                                      "v2/users",
		"42":                                            "{id}",
		"a//b":                                          "a//b",
		"":                                              "",
		"7f3c2a9e-0b1d-4c5e-9f00-11223344556":           "7f3c2a9e-0b1d-4c5e-9f00-11223344556",
		"7f3c2a9e-0b1d-4c5e-9f00_112233445566":          "7f3c2a9e-0b1d-4c5e-9f00_112233445566",
		"user-42":                                       "user-42",
		"café/12":                                       "café/{id}",
	} {
		if got := tracing.DefaultResourceClass(in); got != want {
			t.Errorf("DefaultResourceClass(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultResourceClassAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = tracing.DefaultResourceClass("reports/daily/summary") }); n != 0 {
		t.Errorf("%v allocations for a name without identifiers", n)
	}
}
