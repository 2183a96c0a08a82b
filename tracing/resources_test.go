package tracing_test

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/zklockkit/zklockkit/tracing"
)

// The Observer remembers the class of the resources it saw lately: a
// resource seen before does not call the class function again, and many
// distinct resources do not grow the cache past its bound, nor change the
// class any resource gets.
func TestObserver_ResourceCache(t *testing.T) {
	var calls atomic.Int64
	class := func(r string) string {
		calls.Add(1)
		return tracing.DefaultResourceClass(r)
	}
	o := tracing.NewObserver(tracing.WithResourceClass(class))

	if got := o.ResourceClassOf("accounts/42", tracing.KindExclusive); got != "accounts/{id}" {
		t.Fatalf("class of accounts/42 = %q, want accounts/{id}", got)
	}
	if got := o.ResourceClassOf("accounts/42", tracing.KindExclusive); got != "accounts/{id}" || calls.Load() != 1 {
		t.Fatalf("class of accounts/42 again = %q after %d calls of the class function, want accounts/{id} after 1", got, calls.Load())
	}
	if got := o.ResourceClassOf("accounts/42", tracing.KindRead); got != "accounts/{id}" {
		t.Fatalf("class of accounts/42 in a read lock = %q, want accounts/{id}", got)
	}

	const n = 3*tracing.MaxCachedResources + 7
	for i := range n {
		r := "tenants/t" + strconv.Itoa(i) + "/jobs/" + strconv.Itoa(i)
		want := "tenants/t" + strconv.Itoa(i) + "/jobs/{id}"
		if got := o.ResourceClassOf(r, tracing.KindExclusive); got != want {
			t.Fatalf("class of %s = %q, want %q", r, got, want)
		}
		if i%64 != 0 {
			continue // counting the entries takes a walk of the cache
		}
		if c := o.CachedResources(); c > tracing.MaxCachedResources {
			t.Fatalf("after %d distinct resources the cache holds %d, more than its bound %d", i+3, c, tracing.MaxCachedResources)
		}
	}
	if c := o.CachedResources(); c == 0 || c > tracing.MaxCachedResources {
		t.Errorf("the cache holds %d resources at the end, want 1 to %d", c, tracing.MaxCachedResources)
	}
	// The most recent resource is still cached; an early one was evicted and
	// gets its class, right, from the class function again.
	before := calls.Load()
	last := "tenants/t" + strconv.Itoa(n-1) + "/jobs/" + strconv.Itoa(n-1)
	if got := o.ResourceClassOf(last, tracing.KindExclusive); got != "tenants/t"+strconv.Itoa(n-1)+"/jobs/{id}" || calls.Load() != before {
		t.Errorf("class of the last resource = %q, %d class function calls, want a cached hit", got, calls.Load()-before)
	}
	if got := o.ResourceClassOf("tenants/t0/jobs/0", tracing.KindExclusive); got != "tenants/t0/jobs/{id}" || calls.Load() != before+1 {
		t.Errorf("class of an evicted resource = %q, %d class function calls, want tenants/t0/jobs/{id} computed again", got, calls.Load()-before)
	}
}
