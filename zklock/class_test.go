package zklock

import "testing"

func TestResourceClass(t *testing.T) {
	for in, want := range map[string]string{
		"accounts/42": "accounts/{id}",
		"orders:7f3c2a9e-0b1d-4c5e-9f00-112233445566": "orders:{id}",
		"blobs/9f86d081884c7d65/meta":                 "blobs/{id}/meta",
		"accounts/1,accounts/2":                       "accounts/{id},accounts/{id}",
		"reports/daily":                               "reports/daily",
		"":                                            "",
	} {
		if got := ResourceClass(in); got != want {
			t.Errorf("ResourceClass(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ResourceClass("reports/daily") }); n != 0 {
		t.Errorf("ResourceClass of a name with no identifier allocates %v times", n)
	}
}
